"""The replay viewer in a real browser (headless Chromium): stepping, points of view, faults, layout."""

from __future__ import annotations

import io
import re

import pytest

from referee.cli import main
from referee.engine import JOKER, cards_of
from referee.records.recordfile import record_bytes
from referee.view import build_replay, write_viewer

from .records import self_play_record

pytestmark = pytest.mark.usefixtures("browser")


@pytest.fixture(scope="module")
def record():
    # bob times out twice; cyd sends an invalid reply at its 16th decision, retires, and the fallback finishes.
    return self_play_record(3, ("ada", "bob", "cyd"), timeouts={1: (4, 9)}, retire=(2, 15))


@pytest.fixture(scope="module")
def viewer_url(record, tmp_path_factory):
    path = write_viewer(record, tmp_path_factory.mktemp("viewer") / "game.html")
    return path.as_uri()


def step(pg) -> int:
    return int(pg.get_attribute("body", "data-step"))


def shown_scores(pg) -> list[int]:
    return [int(x) for x in pg.locator(".seat .score").all_inner_texts()]


def test_keyboard_steps_through_the_whole_game_to_the_recorded_scores(page_for, record, viewer_url):
    pg = page_for()
    pg.goto(viewer_url)
    assert step(pg) == 0
    assert "The deal" in pg.inner_text("#story")
    decisions = len(record.decisions)
    stories = set()
    for i in range(1, decisions + 1):
        pg.keyboard.press("ArrowRight")
        assert step(pg) == i
        stories.add(pg.inner_text("#story"))
    pg.keyboard.press("ArrowRight")  # past the end: stays on the last step
    assert step(pg) == decisions
    assert len(stories) > decisions // 2  # each step says something of its own
    assert shown_scores(pg) == list(record.footer.scores)
    finals = {
        int(r.get_attribute("data-seat")): int(r.locator(".final-score").inner_text())
        for r in pg.locator("#result-rows tr").all()
    }
    assert [finals[s] for s in range(3)] == list(record.footer.scores)
    assert "Game over" in pg.inner_text("#next")
    pg.keyboard.press("Home")
    assert step(pg) == 0
    assert pg.is_hidden("#result")
    pg.keyboard.press("End")
    assert step(pg) == decisions
    assert pg.errors == []
    assert all(u.startswith("file:") for u in pg.requests), pg.requests


def test_turn_keys_and_slider_move_a_whole_turn(page_for, record, viewer_url):
    frames = build_replay(record).frames
    turn_ends = [i for i in range(1, len(frames)) if i == len(frames) - 1 or frames[i + 1].turn != frames[i].turn]
    pg = page_for()
    pg.goto(viewer_url)
    pg.keyboard.press("ArrowDown")
    assert step(pg) == turn_ends[0]
    pg.keyboard.press("Shift+ArrowRight")
    assert step(pg) == turn_ends[1]
    pg.keyboard.press("ArrowLeft")
    assert step(pg) == turn_ends[1] - 1
    pg.keyboard.press("ArrowUp")  # back to the end of the turn before the one in progress
    assert step(pg) == max([0, *(i for i in turn_ends if i < turn_ends[1] - 1)])
    pg.keyboard.press("Home")
    pg.keyboard.press("Shift+ArrowLeft")
    assert step(pg) == 0
    pg.locator("#slider").fill("10")  # jump to the end of turn 10
    assert step(pg) == turn_ends[9]
    assert pg.inner_text("#where").startswith("Turn 10 ")


def test_public_view_shows_no_hand_and_a_seat_view_shows_only_its_own(page_for, record, viewer_url):
    r = build_replay(record)
    pg = page_for()
    pg.goto(viewer_url + "#step=20")
    assert pg.get_attribute("body", "data-pov") == "public"
    assert pg.locator(".hand:not(.hidden)").count() == 0
    assert pg.locator(".hand .card.face, .hand .card.joker").count() == 0
    assert pg.locator(".hand.hidden").count() == 3  # card backs only

    pg.select_option("#pov", "1")
    visible = pg.locator(".hand:not(.hidden)")
    assert visible.count() == 1
    assert visible.get_attribute("data-seat") == "1"
    shown = [JOKER if t == "X" else int(t) for t in visible.locator(".card").all_inner_texts()]
    assert shown == r.frames[20].hands[1]

    pg.keyboard.press("f")
    assert pg.locator(".hand:not(.hidden)").count() == 3
    pg.keyboard.press("p")
    assert pg.locator(".hand:not(.hidden)").count() == 0


def test_a_card_drawn_from_the_pile_is_named_only_to_its_drawer(page_for, record, viewer_url):
    r = build_replay(record)
    at, event = next((i, e) for i, s in enumerate(r.frames) for e in s.events if "hidden" in e)
    drawer = event["seat"]
    pg = page_for()
    pg.goto(f"{viewer_url}#step={at}")
    assert event["hidden"] in pg.inner_text("#story")
    assert event["text"] not in pg.inner_text("#story")
    pg.select_option("#pov", str(drawer))
    assert event["text"] in pg.inner_text("#story")
    pg.select_option("#pov", str((drawer + 1) % 3))
    assert event["text"] not in pg.inner_text("#story")


def test_faults_are_marked_where_they_happened(page_for, record, viewer_url):
    pg = page_for()
    pg.goto(viewer_url)
    items = pg.locator("#fault-list li")
    assert items.count() == 3  # two timeouts and the retirement (not every fallback move after it)
    assert pg.locator("#timeline .tick").count() == 3
    items.nth(0).locator("button").click()
    faulted = next(i for i, d in enumerate(record.decisions, 1) if d.fault)
    assert step(pg) == faulted
    assert "timeout" in pg.inner_text("#fault-line")
    assert "fallback" in pg.inner_text("#story")
    assert "timeout" in pg.inner_text('.seat[data-seat="1"]')
    items.nth(2).locator("button").click()
    assert "cyd is retired" in pg.inner_text("#fault-line")
    assert pg.locator('.seat[data-seat="2"].retired').count() == 1
    pg.keyboard.press("End")
    assert "retired" in pg.inner_text('#result-rows tr[data-seat="2"]')


def _pixels(png: bytes):
    from PIL import Image

    img = Image.open(io.BytesIO(png)).convert("RGB")
    return img, img.getcolors(maxcolors=1 << 20) or []


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (390, 844)], ids=["laptop", "phone"])
def test_the_table_is_drawn_and_fits_the_screen(page_for, viewer_url, width, height, tmp_path):
    from PIL import ImageStat

    pg = page_for(width, height)
    pg.goto(viewer_url + "#step=40&view=full")
    shot = pg.screenshot(path=str(tmp_path / "shot.png"))
    img, colours = _pixels(shot)
    assert img.size == (width, height)
    assert len(colours) > 50, "the screenshot is nearly one colour"
    assert max(ImageStat.Stat(img).stddev) > 20, "the screenshot is blank"
    # nothing wider than the screen: no sideways scrolling on a phone
    assert pg.evaluate("document.documentElement.scrollWidth") <= width
    # cards are drawn as boxes with their value
    box = pg.locator(".market .card").first.bounding_box()
    assert box and 14 <= box["width"] <= 40 and box["height"] > box["width"]
    assert re.fullmatch(r"\d+|X", pg.locator(".market .card").first.inner_text())


def test_cli_view_by_game_id_writes_a_page_that_opens(page_for, record, tmp_path, capsys):
    data = tmp_path / "data"
    (data / "records").mkdir(parents=True)
    (data / "records" / "g3.abluxx").write_bytes(record_bytes(record))
    out = tmp_path / "out" / "g3.html"
    assert main(["view", "g3", "--data", str(data), "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    pg = page_for()
    pg.goto(out.as_uri())
    assert "ada vs bob vs cyd" in pg.inner_text("header")
    pg.keyboard.press("End")
    assert shown_scores(pg) == list(record.footer.scores)
    assert cards_of  # the engine's card helpers are what the page mirrors


# Each would end or derail the page's JSON script block if `<` were not escaped there (`>` escaping alone does not
# help: the HTML parser ends a script at `</script` followed by a space, and `<!--<script` changes how it scans).
SCRIPT_BREAKERS = ["</script x", "</sCrIpT x", "</script/x", "<!--<script x"]


@pytest.mark.parametrize("payload", SCRIPT_BREAKERS)
def test_a_name_cannot_break_the_game_data(page_for, tmp_path, payload):
    names = (payload, "bob", "cyd")
    record = self_play_record(5, names)
    path = write_viewer(record, tmp_path / "game.html")
    pg = page_for()
    pg.goto(path.as_uri())
    assert pg.locator(".seat .name").all_text_contents() == list(names)
    pg.keyboard.press("End")
    assert shown_scores(pg) == list(record.footer.scores)
    assert pg.errors == []


def test_a_bot_seat_shows_its_address_beside_its_name(page_for, tmp_path):
    record = self_play_record(5, ("ada", "bob", "greedy"))
    record.header.players[0].address = "127.0.0.1:50051"  # a remote bot; the others are built-in policies
    pg = page_for()
    pg.goto(write_viewer(record, tmp_path / "game.html").as_uri())
    assert pg.locator('.seat[data-seat="0"] .address').inner_text() == "127.0.0.1:50051"
    assert pg.locator(".seat .address").count() == 1
    assert pg.locator(".seat .name").all_inner_texts() == ["ada", "bob", "greedy"]


def test_names_with_markup_characters_read_as_written(page_for, tmp_path):
    names = ("<b>ada</b>", "bob & co", 'cyd "c"')
    path = write_viewer(self_play_record(5, names), tmp_path / "names.html")
    pg = page_for()
    pg.goto(path.as_uri())
    assert pg.locator(".seat .name").all_inner_texts() == list(names)
    for _ in range(4):  # the deal, then a few decisions: the "Next:" line names whoever decides
        text = pg.inner_text("#next")
        assert "&lt;" not in text and "&quot;" not in text and "&amp;" not in text, text
        assert any(n in text for n in names), text
        pg.keyboard.press("ArrowRight")
    assert not pg.errors


def test_play_runs_the_game_to_the_end_and_pause_or_a_step_stops_it(page_for, record, viewer_url):
    last = len(record.decisions)
    pg = page_for()
    # 60 decisions from the end: at 20 a second the player still plays when the test looks, unless a loaded machine
    # keeps the test from looking for 3 s (6 decisions were over in 0.3 s)
    assert last > 60
    pg.goto(f"{viewer_url}#step={last - 60}")
    pg.select_option("#speed", "20")
    pg.click("#play")
    assert pg.get_attribute("#play", "aria-pressed") == "true"
    # it plays on by itself and stops at the end of the game
    pg.wait_for_function(f"() => document.body.dataset.step === '{last}' && document.body.dataset.playing === 'false'")
    assert pg.inner_text("#play") == "play"
    assert "Game over" in pg.inner_text("#next")
    pg.keyboard.press("Home")
    pg.keyboard.press(" ")  # Space plays from the deal
    pg.wait_for_function("() => Number(document.body.dataset.step) >= 3")
    pg.keyboard.press(" ")  # and pauses
    assert pg.get_attribute("body", "data-playing") == "false"
    paused_at = step(pg)
    pg.wait_for_timeout(400)  # at 20 decisions a second, a running player would have moved on
    assert step(pg) == paused_at
    pg.click("#play")
    pg.wait_for_function(f"() => Number(document.body.dataset.step) > {paused_at}")
    pg.keyboard.press("ArrowLeft")  # stepping by hand stops the player
    assert pg.get_attribute("body", "data-playing") == "false"
    assert pg.errors == []


def test_the_move_list_has_a_line_per_decision_marks_faults_and_jumps(page_for, record, viewer_url):
    pg = page_for()
    pg.goto(viewer_url)
    lines = pg.locator("#moves li")
    assert lines.count() == len(record.decisions)
    first = record.decisions[0]
    assert lines.nth(0).inner_text().endswith(f"{('ada', 'bob', 'cyd')[first.seat]}: " + build_replay(record).frames[1]
                                              .decision["action"])  # fmt: skip
    faulted = [i for i, d in enumerate(record.decisions, 1) if d.fault and (d.fault != 7 or d.retired)]
    marked = [int(x) for x in pg.locator("#moves li.fault").evaluate_all("els => els.map(e => e.dataset.step)")]
    assert marked == faulted and len(marked) == 3  # two timeouts and the retirement
    lines.nth(29).locator("button").click()
    assert step(pg) == 30
    assert pg.get_attribute("#moves li:nth-child(30)", "aria-current") == "step"
    pg.keyboard.press("End")  # the current line follows the game and stays in sight inside the list
    current = pg.locator('#moves li[aria-current="step"]')
    assert current.get_attribute("data-step") == str(len(record.decisions))
    box, frame = current.bounding_box(), pg.locator("#moves").bounding_box()
    assert frame["y"] <= box["y"] and box["y"] + box["height"] <= frame["y"] + frame["height"] + 1


def test_the_page_speaks_plain_words(page_for, record, viewer_url):
    pg = page_for()
    pg.goto(viewer_url)
    for _ in range(len(record.decisions) + 1):
        text = pg.inner_text("main")
        assert not re.search(r"\b1 cards\b|CARDS|STACK|HAND", text), text
        pg.keyboard.press("ArrowRight")
    story = pg.inner_text("#story") + pg.inner_text("#next")
    assert "game over: " in story and "(empty_hand)" not in story and "(exhausted)" not in story
    assert re.search(r"Game over: (\w+ laid their last card|the pile and the market ran out)\.", story), story


@pytest.mark.parametrize(("width", "height"), [(390, 844), (360, 640)], ids=["phone", "small-phone"])
def test_on_a_phone_what_happened_is_in_sight_below_a_short_bar(page_for, viewer_url, width, height, tmp_path):
    pg = page_for(width, height)
    pg.goto(viewer_url + "#step=30")
    bar = pg.locator("nav.controls").bounding_box()
    assert bar["height"] <= 0.15 * height, bar
    story = pg.locator("section.story")
    top = story.bounding_box()["y"]
    assert top + 60 <= height, "the story's heading and first line are on the first screen"
    assert "What happened" in story.inner_text()
    pg.mouse.wheel(0, 600)  # the bar stays at the top while the page scrolls, and stays short
    pg.wait_for_function("() => window.scrollY > 0")
    assert pg.locator("nav.controls").bounding_box()["y"] == 0
    assert pg.evaluate("document.documentElement.scrollWidth") <= width
    pg.screenshot(path=str(tmp_path / "phone.png"))


# Each face-up card in a group or a hand: its value's right edge (the text itself, not its box) and the left edge of
# the card after it, in the same row.
_COVERED = """() => {
  const out = [];
  for (const row of document.querySelectorAll('.group, .hand:not(.hidden)')) {
    const cards = [...row.querySelectorAll('.card')];
    cards.forEach((c, i) => {
      const r = document.createRange(); r.selectNodeContents(c);
      const text = r.getBoundingClientRect(), next = cards[i + 1] && cards[i + 1].getBoundingClientRect();
      out.push({value: c.textContent, right: text.right, next: next && Math.abs(next.top - text.top) < 20
                ? next.left : null});
    });
  }
  return out;
}"""


@pytest.mark.parametrize(("width", "height"), [(390, 844), (1280, 800)], ids=["phone", "laptop"])
def test_no_card_value_in_a_group_or_hand_is_covered_by_the_next_card(page_for, record, viewer_url, width, height):
    """On a phone, two 13s in a group read "13 13", not "1313" (the next card covered the second digit)."""
    pg = page_for(width, height)
    seen_two_digits = 0
    for at in (len(record.decisions) // 3, 2 * len(record.decisions) // 3, len(record.decisions)):
        pg.goto(viewer_url + f"#step={at}&view=full")
        pg.wait_for_selector(".seat .stack")
        cards = pg.evaluate(_COVERED)
        covered = [c for c in cards if c["next"] is not None and c["right"] > c["next"] + 0.5]
        assert not covered, covered
        seen_two_digits += sum(len(c["value"]) == 2 and c["next"] is not None for c in cards)
    assert seen_two_digits > 0, "no two-digit card had a card after it: the check saw nothing"
