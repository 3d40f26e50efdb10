// The site's only script: it keeps a leaderboard current. When the page's live stream (Server-Sent Events) says a
// game ended, it fetches the table again from the server (already escaped there) and swaps it in. No framework,
// nothing from another origin.
(() => {
  "use strict";
  const board = document.getElementById("board");
  if (!board || !window.EventSource) return;
  const status = document.getElementById("board-status");
  let pending = false;
  const refresh = async () => {
    if (pending) return;
    pending = true;
    try {
      const r = await fetch(board.dataset.table, { credentials: "same-origin", cache: "no-store" });
      if (r.ok) {
        const html = await r.text();
        const doc = new DOMParser().parseFromString(html, "text/html");
        const table = doc.getElementById("board-table");
        if (table) board.replaceChildren(document.adoptNode(table));
        if (status) status.textContent = "updated " + new Date().toLocaleTimeString();
      }
    } finally {
      pending = false;
    }
  };
  const source = new EventSource(board.dataset.events);
  source.addEventListener("game", refresh);
  source.addEventListener("open", () => { if (status) status.textContent = "live"; });
})();
