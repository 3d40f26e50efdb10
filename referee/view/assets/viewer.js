// The replay viewer. Reads the game from the JSON block in the page and draws one step at a time.
// No network: everything it needs is in the page.
(() => {
  "use strict";
  const DATA = JSON.parse(document.getElementById("game-data").textContent);
  const G = DATA.game;
  const S = DATA.steps;
  const N = G.players.length;
  const $ = (id) => document.getElementById(id);

  // Turn stops: the deal, then the last step of every turn.
  const turnEnds = [0];
  for (let i = 1; i < S.length; i++) {
    if (i === S.length - 1 || S[i + 1].turn !== S[i].turn) turnEnds.push(i);
  }
  // The first step from which each seat is retired (Infinity: never).
  const retiredFrom = Array(N).fill(Infinity);
  S.forEach((s, i) => {
    if (s.d && (s.d.retired || s.d.fault === "retired seat")) {
      retiredFrom[s.d.seat] = Math.min(retiredFrom[s.d.seat], i);
    }
  });
  G.retired.forEach((seat) => { if (retiredFrom[seat] === Infinity) retiredFrom[seat] = S.length - 1; });

  let pos = 0;
  let pov = "public"; // "public", "full", or a seat number as a string

  const esc = (t) => String(t).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
  const name = (seat) => G.players[seat].name;
  const card = (c) => c === 14
    ? '<span class="card joker" data-card="14">X</span>'
    : `<span class="card face" data-card="${c}" style="--hue:${(c * 27) % 360}">${c}</span>`;
  const back = (text) => `<span class="card back">${text ?? ""}</span>`;
  const groupCards = (g) => {
    const [v, n, j] = g;
    const out = [];
    for (let k = 0; k < n; k++) out.push(v);
    for (let k = 0; k < j; k++) out.push(14);
    return out;
  };
  const groupText = (g) => groupCards(g).map((c) => (c === 14 ? "X" : c)).join(",");
  const sees = (seat) => pov === "full" || pov === String(seat);
  const cards = (k) => `${k} card${k === 1 ? "" : "s"}`;

  function drawCentre(s) {
    $("pile").innerHTML = back(s.pile);
    $("pile").title = `${s.pile} cards in the pile`;
    $("market").innerHTML = s.market.length ? s.market.map(card).join("") : '<span class="muted">empty</span>';
    const counts = {};
    s.discard.forEach((c) => { counts[c] = (counts[c] || 0) + 1; });
    const keys = Object.keys(counts).map(Number).sort((a, b) => a - b);
    $("discard").innerHTML = keys.length
      ? keys.map((c) => `<span class="chip">${card(c)}×${counts[c]}</span>`).join("")
      : '<span class="muted">empty</span>';
    $("discard-count").textContent = s.discard.length;
  }

  function drawSeats(s) {
    const d = s.d;
    const html = [];
    for (let seat = 0; seat < N; seat++) {
      const cls = ["seat"];
      const badges = [];
      if (seat === s.next) cls.push("active");
      if (seat === s.victim) { cls.push("victim"); badges.push('<span class="badge victim">abluxxed</span>'); }
      if (s.next === seat && s.nextKind) badges.push(`<span class="badge">to ${s.nextKind.replace(/_/g, " ")}</span>`);
      if (pos >= retiredFrom[seat]) { cls.push("retired"); badges.push('<span class="badge fault">retired</span>'); }
      if (d && d.seat === seat && d.fault && d.fault !== "retired seat") badges.push(`<span class="badge fault">${esc(d.fault)}</span>`);
      const stack = s.stacks[seat];
      const groups = stack.map((g, k) => {
        const gc = ["group"];
        if (k === stack.length - 1) {
          gc.push("topgroup");
          if (d && d.kind === "play" && d.seat === seat) gc.push("played");
          if (seat === s.victim) gc.push("hit");
        }
        return `<span class="${gc.join(" ")}" title="${groupText(g)}">${groupCards(g).map(card).join("")}</span>`;
      }).join("");
      const size = s.sizes[seat];
      const hand = sees(seat)
        ? `<div class="hand row" data-seat="${seat}">${s.hands[seat].map(card).join("") || '<span class="muted">empty hand</span>'}</div>`
        : `<div class="hand hidden row">${Array.from({ length: Math.min(size, 20) }, () => back()).join("")}</div>`;
      html.push(
        `<div class="${cls.join(" ")}" data-seat="${seat}">` +
        `<div class="top"><span class="name">${esc(name(seat))}</span><span class="muted">seat ${seat}</span>` +
        (G.players[seat].address ? `<span class="muted address">${esc(G.players[seat].address)}</span>` : "") +
        `${badges.join(" ")}<span class="score" title="score">${s.scores[seat]}</span></div>` +
        `<div class="label">stack · ${cards(stack.reduce((a, g) => a + g[1] + g[2], 0))}</div>` +
        `<div class="stack">${groups || '<span class="muted">empty</span>'}</div>` +
        `<div class="label">hand · <span class="hand-size">${cards(size)}</span></div>${hand}</div>`,
      );
    }
    $("seats").innerHTML = html.join("");
  }

  function drawStory(s) {
    const d = s.d;
    let head;
    if (!d) {
      head = `The deal: 13 cards to each player, 6 to the market. ${esc(name(G.startSeat))} starts.`;
    } else {
      head = `${esc(name(d.seat))}: ${esc(d.action)}`;
      if (d.by === "fallback") head += ' <span class="faultnote">(chosen by the fallback)</span>';
    }
    let faultLine = "";
    if (d && (d.fault || d.retired)) {
      faultLine = `<div class="faultnote" id="fault-line">⚠ ${esc(d.fault || "fault")} at decision ${pos}` +
        `${d.detail ? ": " + esc(d.detail) : ""}${d.retired ? ` — ${esc(name(d.seat))} is retired` : ""}</div>`;
    }
    const lines = s.ev.map((e) => {
      const text = e.hidden !== undefined && !sees(e.seat) ? e.hidden : e.text;
      return `<li${e.end ? ' class="end"' : ""}>${esc(text)}</li>`;
    });
    $("story").innerHTML = `<div class="decision">${head}</div>${faultLine}` +
      (lines.length ? `<ol>${lines.join("")}</ol>` : "");
    let next = ""; // plain text (textContent): no escaping
    if (s.next === -1) next = G.complete ? `Game over: ${G.endReason}.` : "The record ends here (incomplete).";
    else next = `Next: ${name(s.next)} to ${s.nextKind.replace(/_/g, " ")}.`;
    $("next").textContent = next;
  }

  function drawResult() {
    const el = $("result");
    if (pos !== S.length - 1) { el.hidden = true; return; }
    el.hidden = false;
    const s = S[pos];
    const rows = G.players.map((p, seat) => {
      const place = G.places.length ? G.places[seat] : "";
      const score = G.scores.length ? G.scores[seat] : s.scores[seat];
      return [place, `<tr data-seat="${seat}"><td class="place">${place}</td><td class="name">${esc(p.name)}` +
        `${G.retired.includes(seat) ? ' <span class="badge fault">retired</span>' : ""}</td>` +
        `<td class="final-score">${score}</td><td>${s.sizes[seat]}</td></tr>`];
    }).sort((a, b) => (a[0] || 0) - (b[0] || 0)).map((r) => r[1]);
    $("result-rows").innerHTML = rows.join("");
  }

  function draw() {
    const s = S[pos];
    drawCentre(s);
    drawSeats(s);
    drawStory(s);
    drawResult();
    const decisions = S.length - 1;
    $("where").textContent = pos === 0
      ? `Deal · 0 of ${decisions} decisions`
      : `Turn ${s.turn} · decision ${pos} of ${decisions}`;
    $("story-where").textContent = pos === 0 ? "· the deal" : `· turn ${s.turn}, decision ${pos} of ${decisions}`;
    $("slider").value = String(pos === 0 ? 0 : s.turn);
    $("slider").setAttribute("aria-valuetext", pos === 0 ? "deal" : `turn ${s.turn}`);
    document.body.dataset.step = String(pos);
    document.body.dataset.pov = pov;
    markMove();
    // The address follows the decision and view shown: copied, it opens this move (#step=N&view=V).
    const here = `#step=${pos}&view=${encodeURIComponent(pov)}`;
    $("move-link").setAttribute("href", here);
    if (location.hash !== here) history.replaceState(null, "", here);
  }

  function go(i) {
    pos = Math.max(0, Math.min(S.length - 1, i));
    draw();
  }

  // The move list: one line per decision, the current one marked and kept in sight inside the list.
  const moves = $("moves");
  moves.innerHTML = S.slice(1).map((s, k) => {
    const d = s.d;
    const i = k + 1;
    const fault = (d.fault && d.fault !== "retired seat") || d.retired;
    const cls = fault ? "fault" : d.by === "fallback" ? "fallback" : "";
    const why = fault ? ` <span class="faultnote">⚠ ${esc(d.fault || "retired")}</span>` : "";
    return `<li${cls ? ` class="${cls}"` : ""} data-step="${i}"><button data-step="${i}">` +
      `<span class="n">${i}</span> <span class="t">t${s.turn}</span> ${esc(name(d.seat))}: ${esc(d.action)}</button>${why}</li>`;
  }).join("");
  function markMove() {
    const old = moves.querySelector('[aria-current="step"]');
    if (old) old.removeAttribute("aria-current");
    const li = moves.children[pos - 1];
    if (!li) { moves.scrollTop = 0; return; }
    li.setAttribute("aria-current", "step");
    // Scroll the list only, never the page (scrollIntoView would move the page on a phone).
    const top = li.offsetTop; // #moves is the offset parent (position: relative)
    if (top < moves.scrollTop || top + li.offsetHeight > moves.scrollTop + moves.clientHeight) {
      moves.scrollTop = Math.max(0, top - moves.clientHeight / 3);
    }
  }

  // Play / pause: one decision per tick at the chosen speed; stops at the end, or when you step yourself.
  let timer = null;
  const speed = $("speed");
  function play(on) {
    if (timer) { clearInterval(timer); timer = null; }
    if (on) {
      if (pos === S.length - 1) go(0);
      timer = setInterval(() => { if (pos >= S.length - 1) play(false); else go(pos + 1); }, 1000 / Number(speed.value));
    }
    const b = $("play");
    b.textContent = on ? "pause" : "play";
    b.setAttribute("aria-pressed", String(on));
    b.setAttribute("aria-label", on ? "pause" : "play");
    document.body.dataset.playing = String(on);
  }
  const playing = () => timer !== null;
  const step = (f) => () => { play(false); f(); };
  speed.addEventListener("change", () => { if (playing()) play(true); });
  function faster(by) {
    speed.selectedIndex = Math.max(0, Math.min(speed.options.length - 1, speed.selectedIndex + by));
    if (playing()) play(true);
  }
  const nextTurn = () => go(turnEnds.find((i) => i > pos) ?? S.length - 1);
  const prevTurn = () => { const before = turnEnds.filter((i) => i < pos); go(before.length ? before[before.length - 1] : 0); };

  function setView(v) {
    pov = v;
    $("pov").value = v;
    draw();
  }

  // Controls.
  const sel = $("pov");
  sel.innerHTML = '<option value="public">Public view</option>' +
    G.players.map((p, i) => `<option value="${i}">Seat ${i}: ${esc(p.name)}</option>`).join("") +
    '<option value="full">Full view (every hand)</option>';
  sel.addEventListener("change", () => setView(sel.value));
  $("slider").max = String(turnEnds.length - 1);
  $("slider").addEventListener("input", (e) => { play(false); go(turnEnds[Number(e.target.value)]); });
  $("first").onclick = step(() => go(0));
  $("prev-turn").onclick = step(prevTurn);
  $("prev").onclick = step(() => go(pos - 1));
  $("play").onclick = () => play(!playing());
  $("next-btn").onclick = step(() => go(pos + 1));
  $("next-turn").onclick = step(nextTurn);
  $("last").onclick = step(() => go(S.length - 1));

  // Fault marks on the timeline and in the list.
  // A retired seat's later decisions all carry "retired seat": mark only the retirement itself.
  const faults = S.map((s, i) => [s, i]).filter(([s]) => s.d && ((s.d.fault && s.d.fault !== "retired seat") || s.d.retired));
  const fallbackAfter = Array(N).fill(0);
  S.forEach((s) => { if (s.d && s.d.fault === "retired seat") fallbackAfter[s.d.seat]++; });
  $("timeline").innerHTML = faults.map(([s, i]) =>
    `<button class="tick" data-step="${i}" style="left:${(100 * i) / Math.max(1, S.length - 1)}%"` +
    ` title="turn ${s.turn}: ${esc(name(s.d.seat))} ${esc(s.d.fault || "retired")}"></button>`).join("");
  $("fault-list").innerHTML = faults.length
    ? faults.map(([s, i]) => `<li><button data-step="${i}">turn ${s.turn}, decision ${i}</button>: ` +
      `${esc(name(s.d.seat))} — ${esc(s.d.fault || "retired")}${s.d.detail ? " (" + esc(s.d.detail) + ")" : ""}` +
      `${s.d.retired ? `, retired; the fallback played its ${fallbackAfter[s.d.seat]} later decisions` : ""}</li>`).join("")
    : '<li class="muted">No faults in this game.</li>';
  document.querySelectorAll("button[data-step]").forEach((b) => { b.onclick = step(() => go(Number(b.dataset.step))); });

  document.addEventListener("keydown", (e) => {
    if (e.target === sel || e.target === speed || e.altKey || e.ctrlKey || e.metaKey) return;
    const k = e.key;
    if (k === " " && e.target.tagName === "BUTTON") return; // the button's own click
    let done = true;
    if (k === " ") play(!playing());
    else if (k === "+" || k === "=") faster(1);
    else if (k === "-") faster(-1);
    else if (["ArrowRight", "ArrowLeft", "ArrowDown", "ArrowUp", "PageDown", "PageUp", "Home", "End"].includes(k)) {
      play(false);
      done = false;
    } else done = false;
    if (done) { e.preventDefault(); return; }
    done = true;
    if (k === "ArrowRight") (e.shiftKey ? nextTurn : () => go(pos + 1))();
    else if (k === "ArrowLeft") (e.shiftKey ? prevTurn : () => go(pos - 1))();
    else if (k === "ArrowDown" || k === "PageDown") nextTurn();
    else if (k === "ArrowUp" || k === "PageUp") prevTurn();
    else if (k === "Home") go(0);
    else if (k === "End") go(S.length - 1);
    else if (k === "p") setView("public");
    else if (k === "f") setView("full");
    else if (/^[1-5]$/.test(k) && Number(k) <= N) setView(String(Number(k) - 1));
    else done = false;
    if (done) e.preventDefault();
  });

  const h = new URLSearchParams(location.hash.slice(1));
  if (h.has("view")) pov = h.get("view");
  go(h.has("step") ? Number(h.get("step")) : 0);
  // A link to another move of this game, followed on the page (or typed into the address), goes there.
  window.addEventListener("hashchange", () => {
    const to = new URLSearchParams(location.hash.slice(1));
    play(false);
    if (to.has("view")) { pov = to.get("view"); $("pov").value = pov; }
    go(to.has("step") ? Number(to.get("step")) : pos);
  });
  $("pov").value = pov;
  play(false);
})();
