// arena serve: the live parts of a tournament page. Written for arena (GPL-3.0-or-later), no
// dependencies. The leaderboard and the games list come from the server as markup it built
// (every store text escaped there); games open in the report's viewer (viewer.js), which fetches
// them. The server's events (server-sent events, see crates/outputs/src/serve/live.rs) say what changed.
"use strict";
(function () {
  const body = document.body;
  const $ = (id) => document.getElementById(id);
  const live = { events: 0, plies: 0, lists: 0, boards: 0 };
  const mark = () => {
    const d = document.documentElement.dataset;
    d.liveEvents = live.events; d.liveLists = live.lists; d.liveBoards = live.boards;
  };

  // Replaces the element with id `id` by the one the server answers at `url`.
  async function swap(id, url) {
    const res = await fetch(url, { headers: { Accept: "text/html" } });
    if (!res.ok) return false;
    const doc = new DOMParser().parseFromString(await res.text(), "text/html");
    const fresh = doc.getElementById(id);
    const old = $(id);
    if (!fresh || !old) return false;
    old.replaceWith(document.adoptNode(fresh));
    return true;
  }

  const board = $("leaderboard");
  async function refreshLeaderboard() {
    if (board) await swap("leaderboard", board.dataset.src);
  }

  let listTimer = null;
  function refreshList() {
    clearTimeout(listTimer);
    listTimer = setTimeout(async () => {
      const list = $("games-list");
      if (!list || !body.dataset.listUrl) return;
      const keep = location.search || "";
      if (await swap("games-list", body.dataset.listUrl + keep)) { live.lists++; mark(); }
    }, 150);
  }

  // Rows open their game (the list is swapped in whole, so clicks are taken at the document).
  document.addEventListener("click", (ev) => {
    const row = ev.target.closest && ev.target.closest("tr.game");
    if (!row || ev.target.closest("a")) return;
    location.hash = "game=" + row.dataset.game;
  });

  async function onPly(data) {
    const row = document.querySelector("tr.game[data-game='" + data.game + "'] td.plies");
    if (row && data.plies !== undefined) row.textContent = String(data.plies);
    const viewer = window.arenaViewer;
    if (viewer && String(viewer.openGame()) === String(data.game)) {
      await viewer.refresh(data.game);
      live.boards++; mark();
    }
  }

  refreshLeaderboard();
  if (body.dataset.eventsUrl && window.EventSource) {
    const source = new EventSource(body.dataset.eventsUrl);
    const on = (name, f) => source.addEventListener(name, (ev) => {
      live.events++; mark();
      f(JSON.parse(ev.data));
    });
    on("hello", () => { document.documentElement.dataset.live = "1"; });
    on("ply", onPly);
    on("games", refreshList);
    on("leaderboard", refreshLeaderboard);
    // The stream fell behind the server's readings: read everything again.
    on("resync", () => {
      refreshList();
      refreshLeaderboard();
      const viewer = window.arenaViewer;
      if (viewer && viewer.openGame()) viewer.refresh(viewer.openGame());
    });
  }
  mark();
})();
