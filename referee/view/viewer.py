"""The replay viewer: one self-contained HTML page for one game record."""

from __future__ import annotations

import html
from pathlib import Path

from referee.proto.abluxxen.v1 import record_pb2

from .page import asset, json_block, page
from .replay import Replay, build_replay

_BODY = """
<header class="page"><h1>{title}</h1><div class="sub">{sub}</div></header>
<nav class="controls" aria-label="replay controls">
  <div class="buttons">
    <button id="first" title="the deal (Home)" aria-label="the deal">|&#x25C0;</button>
    <button id="prev-turn" title="previous turn (Up, Shift+Left)" aria-label="previous turn">&#x25C0;&#x25C0;</button>
    <button id="prev" title="previous decision (Left)" aria-label="previous decision">&#x25C0;</button>
    <button id="play" class="play" title="play / pause (Space)" aria-label="play" aria-pressed="false">play</button>
    <button id="next-btn" title="next decision (Right)" aria-label="next decision">&#x25B6;</button>
    <button id="next-turn" title="next turn (Down, Shift+Right)" aria-label="next turn">&#x25B6;&#x25B6;</button>
    <button id="last" title="the end (End)" aria-label="the end">&#x25B6;|</button>
    <select id="speed" aria-label="speed" title="decisions per second (+ / -)">
      <option value="1">1/s</option><option value="2" selected>2/s</option><option value="4">4/s</option>
      <option value="8">8/s</option><option value="20">20/s</option>
    </select>
  </div>
  <span class="where" id="where" aria-live="polite"></span>
  <a class="move-link" id="move-link" href="#step=0" title="a link to the decision and view shown">link</a>
  <label class="slider">
    <input type="range" id="slider" min="0" max="0" value="0" aria-label="jump to turn">
    <div class="timeline" id="timeline"></div>
  </label>
  <select id="pov" aria-label="point of view"></select>
</nav>
<main class="viewer">
  <section class="panel story" aria-label="what happened">
    <h2>What happened <span id="story-where" class="muted"></span></h2>
    <div id="story"></div>
    <div id="next" class="muted"></div>
  </section>
  <section class="table" aria-label="the table">
    <div class="centre">
      <div class="zone pile"><span class="label">pile</span><div id="pile" class="row"></div></div>
      <div class="zone market"><span class="label">market</span><div id="market" class="row"></div></div>
      <div class="zone discard"><span class="label">discard pile · <span id="discard-count"></span></span>
        <div id="discard" class="row"></div></div>
    </div>
    <div class="seats" id="seats"></div>
  </section>
  <section class="panel moves" aria-label="moves">
    <h2>Moves <span class="muted">· click one to go there</span></h2>
    <ol id="moves"></ol>
  </section>
  <section class="panel result" id="result" hidden>
    <h2>Result</h2>
    <table><thead><tr><th>place</th><th class="name">player</th><th>score</th><th>hand</th></tr></thead>
    <tbody id="result-rows"></tbody></table>
  </section>
  <section class="panel faults"><h2>Faults</h2><ul id="fault-list"></ul></section>
  <section class="panel keys"><h2>Keys</h2>
    <kbd>Space</kbd> play / pause &middot; <kbd>+</kbd> <kbd>-</kbd> faster / slower &middot;
    <kbd>&#x2190;</kbd> <kbd>&#x2192;</kbd> decision back / forward &middot;
    <kbd>&#x2191;</kbd> <kbd>&#x2193;</kbd> or <kbd>Shift</kbd>+<kbd>&#x2190;</kbd> <kbd>&#x2192;</kbd>
    turn back / forward &middot; <kbd>Home</kbd> the deal &middot; <kbd>End</kbd> the end &middot;
    <kbd>p</kbd> public view &middot; <kbd>1</kbd>&hellip;<kbd>5</kbd> a seat's view &middot; <kbd>f</kbd> full view
  </section>
</main>
"""


def viewer_body(r: Replay) -> tuple[str, str]:
    """The viewer's title and body for a replayed record (its data and script are added by whoever serves it: this
    file's page inlines them, the web site links its script)."""
    players = " vs ".join(r.names)
    title = f"Abluxxen game {r.game_id}" if r.game_id else "Abluxxen game"
    bits = [players, f"{r.turns} turns", f"{len(r.frames) - 1} decisions"]
    if r.tournament_id:
        bits.append(f"tournament {r.tournament_id}")
    if r.options["draw_one"]:
        bits.append("option draw_one")
    if r.options["end_on_empty_pile"]:
        bits.append("option end_on_empty_pile")
    if not r.complete:
        bits.append("INCOMPLETE record")
    return title, _BODY.format(title=html.escape(title), sub=html.escape(" · ".join(bits)))


def viewer_html(game: Replay | record_pb2.GameRecord) -> str:
    """The viewer page for a record (or an already replayed one)."""
    r = game if isinstance(game, Replay) else build_replay(game)
    title, body = viewer_body(r)
    script = json_block("game-data", r.to_json()) + f"\n<script>\n{asset('viewer.js')}\n</script>"
    return page(title, body, styles=("base.css", "viewer.css"), script=script)


def write_viewer(game: Replay | record_pb2.GameRecord, out: Path) -> Path:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(viewer_html(game), encoding="utf-8")
    return out
