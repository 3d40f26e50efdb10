// The site's only script: it keeps a leaderboard, and the lists of the games being played now, current. When the
// page's live stream (Server-Sent Events, the section's data-events) says a game started or ended, it fetches the
// live parts again from the server (data-table: the table, the rating plot and the games being played now, already
// escaped there) and swaps in those the page has. No framework, nothing from another origin.
(() => {
  "use strict";
  const board = document.querySelector("section[data-events]");
  if (!board || !window.EventSource) return;
  const status = document.getElementById(board.dataset.status || "board-status");
  // The live parts of the page, each swapped for the server's new one by its id.
  const PARTS = ["board-table", "rating-plot", "playing-now"];
  let pending = false, again = false;
  const refresh = async () => {
    if (pending) { again = true; return; }  // one more fetch after this one: the news came after it was asked
    pending = true;
    try {
      const r = await fetch(board.dataset.table, { credentials: "same-origin", cache: "no-store" });
      if (r.ok) {
        const html = await r.text();
        const doc = new DOMParser().parseFromString(html, "text/html");
        for (const id of PARTS) {
          const fresh = doc.getElementById(id), here = document.getElementById(id);
          if (fresh && here) here.replaceWith(document.adoptNode(fresh));
        }
        if (status) status.textContent = "updated " + new Date().toLocaleTimeString();
      }
    } finally {
      pending = false;
      if (again) { again = false; refresh(); }
    }
  };
  const source = new EventSource(board.dataset.events);
  source.addEventListener("game", refresh);
  source.addEventListener("started", refresh);
  source.addEventListener("open", () => { if (status) status.textContent = "live"; });
})();
