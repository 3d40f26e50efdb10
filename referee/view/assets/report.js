// The report's games table: a filter by entrant, sorting by any column, and pages. Without this script every row
// shows, in schedule order.
(() => {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const table = $("games-table");
  if (!table) return;
  const body = table.tBodies[0];
  const rows = Array.from(body.rows);
  const entrant = $("games-entrant");
  const size = $("games-size");
  let key = "slot";
  let dir = 1; // 1 ascending, -1 descending
  let page = 0;

  // What a column sorts by. "score" is the chosen entrant's score, or the game's top score for everyone.
  const num = (r, k) => Number(r.dataset[k]);
  const score = (r) => {
    const who = entrant.value;
    if (!who) return num(r, "top");
    const p = Array.from(r.querySelectorAll(".player")).find((x) => x.dataset.entrant === who);
    return p ? Number(p.dataset.score) : -Infinity;
  };
  const by = {
    slot: (r) => num(r, "slot"),
    game: (r) => r.dataset.game,
    score,
    decisions: (r) => num(r, "decisions"),
    ended: (r) => r.dataset.ended,
    notes: (r) => r.dataset.notes,
  };
  const plays = (r, who) => Array.from(r.querySelectorAll(".player")).some((x) => x.dataset.entrant === who);

  function show() {
    const who = entrant.value;
    const picked = rows.filter((r) => !who || plays(r, who));
    const f = by[key];
    picked.sort((a, b) => {
      const x = f(a), y = f(b);
      const c = typeof x === "string" ? x.localeCompare(y) : x - y;
      return c * dir || num(a, "slot") - num(b, "slot");
    });
    const per = Number(size.value) || picked.length || 1;
    const pages = Math.max(1, Math.ceil(picked.length / per));
    page = Math.min(page, pages - 1);
    const shown = new Set(picked.slice(page * per, (page + 1) * per));
    body.append(...picked, ...rows.filter((r) => !picked.includes(r))); // the order, then the rest (hidden)
    rows.forEach((r) => { r.hidden = !shown.has(r); });
    const from = picked.length ? page * per + 1 : 0;
    $("games-count").textContent = `games ${from}–${page * per + shown.size} of ${picked.length}` +
      (who ? ` with ${who}` : "");
    $("games-page").textContent = `page ${page + 1} of ${pages}`;
    $("games-prev").disabled = page === 0;
    $("games-next").disabled = page >= pages - 1;
    table.querySelectorAll("th[data-sort]").forEach((th) => {
      th.setAttribute("aria-sort", th.dataset.sort !== key ? "none" : dir > 0 ? "ascending" : "descending");
    });
  }

  table.querySelectorAll("th[data-sort] button").forEach((b) => {
    b.onclick = () => {
      const k = b.parentElement.dataset.sort;
      // a new column starts with its most useful order: scores and lengths high first, the rest A to Z
      if (k === key) dir = -dir;
      else { key = k; dir = ["score", "decisions", "notes"].includes(k) ? -1 : 1; }
      page = 0;
      show();
    };
  });
  entrant.onchange = () => { page = 0; show(); };
  size.onchange = () => { page = 0; show(); };
  $("games-prev").onclick = () => { page -= 1; show(); };
  $("games-next").onclick = () => { page += 1; show(); };
  show();
})();
