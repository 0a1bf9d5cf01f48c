// arena report viewer: the games-list filters and the game viewer.
// Written for arena (GPL-3.0-or-later), no dependencies. Every text from the store is put into
// the page with textContent, never as markup; per-game data blocks are gzip+base64 JSON, inflated
// with the browser's DecompressionStream when a game is opened.
"use strict";
(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const SQ = 45;
  const cache = new Map();
  const state = { game: null, cursor: 0, flipped: false, entries: [] };
  const $ = (id) => document.getElementById(id);

  function h(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") e.className = v;
      else if (k === "onclick") e.addEventListener("click", v);
      else e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }
  function s(tag, attrs) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    return e;
  }

  // ---- games list filters --------------------------------------------------------------
  function setupFilters(section) {
    const selects = section.querySelectorAll("select[data-filter]");
    const rows = Array.from(section.querySelectorAll("tr.game"));
    const count = section.querySelector(".filters .count");
    const apply = () => {
      const f = {};
      selects.forEach((sel) => (f[sel.dataset.filter] = sel.value));
      let shown = 0;
      for (const row of rows) {
        const d = row.dataset;
        let ok = true;
        const asWhite = d.white === f.player, asBlack = d.black === f.player;
        if (f.player) {
          if (f.colour === "white") ok = asWhite;
          else if (f.colour === "black") ok = asBlack;
          else ok = asWhite || asBlack;
        }
        if (ok && f.result) {
          if (f.result === "won" || f.result === "lost") {
            const whiteWon = d.result === "1-0", blackWon = d.result === "0-1";
            if (!f.player) ok = whiteWon || blackWon;
            else if (f.result === "won") ok = (asWhite && whiteWon) || (asBlack && blackWon);
            else ok = (asWhite && blackWon) || (asBlack && whiteWon);
          } else ok = d.result === f.result;
        }
        if (ok && f.termination) ok = d.termination === f.termination;
        row.hidden = !ok;
        if (ok) shown++;
      }
      if (count) count.textContent = shown + " of " + rows.length + " games";
    };
    selects.forEach((sel) => sel.addEventListener("change", apply));
    rows.forEach((row) => {
      row.addEventListener("click", (ev) => {
        if (ev.target.closest("a")) return;
        location.hash = "game=" + row.dataset.game;
      });
      row.addEventListener("keydown", (ev) => {
        if (ev.key === "Enter") location.hash = "game=" + row.dataset.game;
      });
    });
  }

  // ---- data ----------------------------------------------------------------------------
  // A report carries every game in a data block; a page of `arena serve` names the address
  // its games are fetched from (`data-games-url` on <body>), one game at a time.
  async function load(id) {
    if (cache.has(id)) return cache.get(id);
    const served = document.body.dataset.gamesUrl;
    let game;
    if (served) {
      const res = await fetch(served + encodeURIComponent(id), { headers: { Accept: "application/json" } });
      if (!res.ok) throw new Error("game " + id + ": the server answered " + res.status);
      game = await res.json();
    } else {
      const block = $("gd-" + id);
      if (!block) throw new Error("no data for game " + id);
      const bin = atob(block.textContent.trim());
      const bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      game = JSON.parse(await new Response(stream).text());
    }
    restoreRepeats(game);
    cache.set(id, game);
    return game;
  }

  // A message that repeats the one at its place in the same player's previous call (the system
  // prompt, at every ply) comes as {as_before: true}: put the message back. The calls are read
  // in the order the report wrote them: the plies, then the pending plies.
  function restoreRepeats(game) {
    const previous = new Map();
    const calls = game.plies.concat(game.pending).flatMap((p) => p.calls || []);
    for (const c of calls) {
      if (!c.messages) continue;
      const before = previous.get(c.player) || [];
      c.messages = c.messages.map((m, i) => (m.as_before ? before[i] : m));
      previous.set(c.player, c.messages);
    }
  }

  // ---- viewer --------------------------------------------------------------------------
  async function open(id, cursor) {
    let game;
    try {
      game = await load(id);
    } catch (e) {
      $("viewer").hidden = false;
      $("v-title").textContent = "This game could not be read";
      $("v-sub").textContent = String(e && e.message ? e.message : e);
      return;
    }
    if (state.game !== game) {
      state.game = game;
      state.entries = [{ kind: "start" }]
        .concat(game.plies.map((p, i) => ({ kind: "ply", ply: p, index: i })))
        .concat(game.pending.map((p) => ({ kind: "pending", ply: p })));
      renderHeader(game);
      renderMoves(game);
      renderGraph(game);
    }
    $("viewer").hidden = false;
    document.body.classList.add("viewing");
    const last = state.entries.length - 1;
    go(cursor === undefined ? Math.min(1, last) : Math.max(0, Math.min(cursor, last)));
    $("v-close").focus({ preventScroll: true });
  }

  function close() {
    $("viewer").hidden = true;
    document.body.classList.remove("viewing");
    if (location.hash.startsWith("#game=")) history.replaceState(null, "", location.pathname + location.search);
  }

  function renderHeader(g) {
    $("v-title").textContent = g.white + " – " + g.black + "  (game " + g.index + ", round " + g.round + ")";
    const bits = [g.tournament, g.status];
    if (g.variant === "chess960") bits.push("Chess960");
    if (g.opening) bits.push("opening " + g.opening);
    if (g.generation !== null && g.generation !== undefined) bits.push("script generation " + g.generation);
    $("v-sub").textContent = bits.join(" · ");
    const end = $("v-end");
    end.replaceChildren();
    if (g.result) {
      end.append(h("p", { class: "result" }, h("strong", {}, g.result), " · ", (g.termination || "").replace(/_/g, " ")));
    } else {
      end.append(h("p", { class: "result" }, "unfinished (" + g.status + ")"));
    }
    if (g.reason) end.append(h("p", { class: "reason" }, g.reason));
    if (g.error) end.append(h("p", { class: "error" }, (g.error_kind ? g.error_kind + " error: " : "error: ") + g.error));
  }

  function moveLabel(p) {
    const f = (p.before || "").split(" ");
    const num = f[5] || "1";
    return f[1] === "b" ? num + "… " : num + ". ";
  }
  const NAG = { inaccuracy: "?!", mistake: "?", blunder: "??" };
  function failed(calls) {
    return calls.filter((c) => c.outcome && !/^(move|proposal|sample|say|reflection_notes|do_reflection|get_.*)$/.test(c.outcome)).length;
  }

  function renderMoves(g) {
    const list = $("v-moves");
    list.replaceChildren();
    state.entries.forEach((e, i) => {
      if (e.kind === "start") return;
      let label, cls = "mv";
      if (e.kind === "ply") {
        const p = e.ply;
        label = moveLabel(p) + p.san + (p.a && NAG[p.a.cls] ? NAG[p.a.cls] : "");
        if (p.player === "book") cls += " book";
        if (p.a && p.a.cls) cls += " " + p.a.cls;
      } else {
        label = "ply " + (e.ply.n + 1) + ": no move";
        cls += " nomove";
      }
      const calls = e.ply.calls || [];
      const bad = failed(calls);
      const li = h("li", { class: cls, "data-cursor": i, title: e.kind === "ply" ? e.ply.player : "no move was made" },
        h("button", { type: "button", onclick: () => go(i) }, label),
        bad ? h("span", { class: "bad", title: bad + " failed attempt(s)" }, "✗" + bad) : null);
      list.append(li);
    });
    if (state.entries.length === 1) list.append(h("li", { class: "note" }, "no move was played"));
  }

  function renderGraph(g) {
    const box = $("v-graph");
    box.replaceChildren();
    const pts = g.plies.map((p, i) => (p.a ? { i: i + 1, w: p.a.w, p } : null));
    if (!pts.some((x) => x)) {
      box.append(h("p", { class: "note" }, "No engine analysis is stored for this game: no evaluation graph."));
      return;
    }
    const W = 360, H = 110, n = Math.max(g.plies.length, 1);
    const x = (i) => (i / n) * W, y = (w) => H - (w / 100) * H;
    const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, id: "eval-graph", role: "img", "aria-label": "evaluation graph: White's winning chance per ply" });
    svg.append(s("rect", { x: 0, y: 0, width: W, height: H, class: "bg" }));
    svg.append(s("line", { x1: 0, x2: W, y1: H / 2, y2: H / 2, class: "mid" }));
    let d = "", started = false;
    const start = g.w0 !== null && g.w0 !== undefined ? g.w0 : null;
    if (start !== null) { d += `M0 ${y(start).toFixed(1)}`; started = true; }
    for (const pt of pts) {
      if (!pt) continue;
      d += (started ? " L" : "M") + x(pt.i).toFixed(1) + " " + y(pt.w).toFixed(1);
      started = true;
    }
    svg.append(s("path", { d, class: "line" }));
    const cursor = s("line", { x1: 0, x2: 0, y1: 0, y2: H, class: "cursor", id: "graph-cursor" });
    svg.append(cursor);
    for (const pt of pts) {
      if (!pt || !["inaccuracy", "mistake", "blunder"].includes(pt.p.a.cls)) continue;
      const c = s("circle", { cx: x(pt.i), cy: y(pt.w), r: pt.p.a.cls === "blunder" ? 4.5 : 3.5, class: "mark " + pt.p.a.cls, "data-cursor": pt.i });
      const t = s("title", {});
      t.textContent = moveLabel(pt.p) + pt.p.san + ": " + pt.p.a.cls + " (" + pt.p.player + ")";
      c.append(t);
      c.addEventListener("click", (ev) => { ev.stopPropagation(); go(pt.i); });
      svg.append(c);
    }
    svg.addEventListener("click", (ev) => {
      const r = svg.getBoundingClientRect();
      go(Math.round(((ev.clientX - r.left) / r.width) * n));
    });
    box.append(svg);
    box.append(h("p", { class: "note" }, "White's winning chance after each ply (engine analysis); dots: inaccuracies, mistakes (orange) and blunders (red), click to go there."));
  }

  function fenOf(cursor) {
    const g = state.game;
    const e = state.entries[cursor];
    if (e.kind === "start") return g.start;
    if (e.kind === "ply") return e.ply.fen || e.ply.before;
    const lastPly = g.plies[g.plies.length - 1];
    return lastPly ? lastPly.fen || lastPly.before : g.start;
  }

  function squareXY(sq) {
    const f = sq.charCodeAt(0) - 97, r = sq.charCodeAt(1) - 49;
    return state.flipped ? [(7 - f) * SQ, r * SQ] : [f * SQ, (7 - r) * SQ];
  }

  function drawBoard(fen, lastUci) {
    const board = $("board");
    board.querySelectorAll("rect.sq").forEach((r) => {
      const [x, y] = squareXY(r.dataset.sq);
      r.setAttribute("x", x); r.setAttribute("y", y);
    });
    board.querySelectorAll(".coords text").forEach((t) => {
      const i = Number(t.dataset.i);
      if (t.classList.contains("file")) t.textContent = String.fromCharCode(97 + (state.flipped ? 7 - i : i));
      else t.textContent = String(state.flipped ? 8 - i : i + 1);
    });
    const marks = $("marks");
    marks.replaceChildren();
    if (lastUci && lastUci.length >= 4) {
      for (const sq of [lastUci.slice(0, 2), lastUci.slice(2, 4)]) {
        const [x, y] = squareXY(sq);
        marks.append(s("rect", { x, y, width: SQ, height: SQ, class: "last" }));
      }
    }
    const layer = $("pieces");
    layer.replaceChildren();
    const rows = (fen || "").split(" ")[0].split("/");
    rows.forEach((row, ri) => {
      let file = 0;
      for (const ch of row) {
        if (/[1-8]/.test(ch)) { file += Number(ch); continue; }
        const white = ch === ch.toUpperCase();
        const sq = String.fromCharCode(97 + file) + String(8 - ri);
        const [x, y] = squareXY(sq);
        const use = s("use", { href: "#p-" + (white ? "w" : "b") + ch.toUpperCase(), x, y, width: SQ, height: SQ, class: "piece", "data-sq": sq, "data-piece": ch });
        layer.append(use);
        file++;
      }
    });
  }

  function go(cursor) {
    if (!state.game) return;
    const last = state.entries.length - 1;
    cursor = Math.max(0, Math.min(cursor, last));
    state.cursor = cursor;
    const e = state.entries[cursor];
    drawBoard(fenOf(cursor), e.kind === "ply" ? e.ply.uci : null);
    $("v-fen").textContent = fenOf(cursor);
    $("v-jump").value = cursor;
    $("v-jump").max = last;
    document.querySelectorAll("#v-moves li").forEach((li) => li.classList.toggle("current", Number(li.dataset.cursor) === cursor));
    const cur = document.querySelector("#v-moves li.current");
    if (cur) cur.scrollIntoView({ block: "nearest" });
    const gc = $("graph-cursor");
    if (gc) {
      const n = Math.max(state.game.plies.length, 1);
      const gx = (Math.min(cursor, state.game.plies.length) / n) * 360;
      gc.setAttribute("x1", gx); gc.setAttribute("x2", gx);
    }
    renderPly(e);
    const want = "#game=" + state.game.id + "&ply=" + cursor;
    if (location.hash !== want) history.replaceState(null, "", want);
  }

  function kv(label, value) {
    if (value === null || value === undefined || value === "") return null;
    return h("span", { class: "kv" }, h("span", { class: "k" }, label), " ", String(value));
  }
  function longText(label, text, openIt, cls) {
    const first = (text || "").split("\n")[0].slice(0, 90);
    const more = (text || "").length > first.length;
    const d = h("details", { class: cls || "text", open: openIt || false },
      h("summary", {}, h("span", { class: "label" }, label), h("span", { class: "preview" }, more ? first + " …" : first)),
      h("pre", {}, text || ""));
    return d;
  }

  function renderPly(e) {
    const panel = $("v-ply");
    panel.replaceChildren();
    const title = $("v-ply-title");
    if (e.kind === "start") {
      title.textContent = "Start position";
      panel.append(h("p", { class: "note" }, state.entries.length > 1 ? "Press → (or click a move) to step through the game." : "No move was played in this game."));
      return;
    }
    const p = e.ply;
    // `n` is the stored ply, counted from 0; the viewer counts from 1, as its cursor and the
    // address do: `&ply=6` and "Ply 6" both mean the sixth move and the board after it.
    if (e.kind === "ply") {
      title.textContent = "Ply " + (p.n + 1) + " · " + moveLabel(p) + p.san + " · " + p.player;
      const meta = h("p", { class: "meta" }, kv("move", p.uci), kv("attempts", p.attempts), kv("time", p.ms + " ms"));
      panel.append(meta);
      if (p.a) {
        const a = p.a;
        const score = a.mate !== null && a.mate !== undefined ? "mate " + a.mate : (a.cp / 100).toFixed(2);
        panel.append(h("p", { class: "analysis " + a.cls },
          kv("class", a.cls), kv("eval (White)", score), kv("White win %", a.w), kv("best", a.best), kv("cp loss", a.loss), kv("rank", a.rank), kv("phase", a.phase)));
      }
    } else {
      title.textContent = "Ply " + (p.n + 1) + " · no move";
      panel.append(h("p", { class: "reason" }, state.game.reason || "No move was accepted for this ply."));
    }
    const calls = p.calls || [];
    if (!calls.length) {
      panel.append(h("p", { class: "note" }, p.player === "book" ? "A book move of the opening." : "No model call: this player answers natively (engine or random mover)."));
      return;
    }
    const agentic = calls.length > 1 && calls.some((c) => c.outcome && /^(get_|make_move|wrong_action|wrong_move|say)/.test(c.outcome));
    // Self-consistency: every sample is a call, and one vote over them is an attempt.
    const voted = calls.some((c) => c.outcome === "sample");
    panel.append(h("p", { class: "note" }, calls.length + (agentic ? " dialog turn(s)" : voted ? " call(s), self-consistency samples (one vote per attempt; the other samples' outcome is \u201csample\u201d)" : " attempt(s)") + " for this ply"));
    calls.forEach((c, i) => {
      const ok = c.outcome === "move";
      const sample = c.outcome === "sample";
      const card = h("div", { class: "attempt " + (ok ? "ok" : sample ? "unused" : c.outcome ? "failed" : "unused"), "data-seq": c.seq });
      card.append(h("h5", {}, (agentic ? "turn " : voted ? "call " : "attempt ") + (i + 1),
        c.role ? " · " + c.role : "",
        " · ", h("span", { class: "outcome" }, c.outcome || "(reply never used)")));
      card.append(h("p", { class: "meta" }, kv("model", c.model), kv("tokens", c.pt == null || c.ct == null ? "unknown (no usage reported)" : c.pt + " + " + c.ct), kv("latency", c.ms + " ms"),
        kv("cached", c.cached), kv("reasoning tokens", c.reasoning_tokens),
        kv("cost", c.cost !== null && c.cost !== undefined ? "$" + c.cost.toFixed(6) + (c.cost_source === "provider" ? " (by the provider)" : " (price table)") : null), kv("finish", c.finish), kv("HTTP", c.http),
        kv("transport retries", c.retries || null)));
      if (c.error) card.append(h("p", { class: "error" }, c.error));
      if (c.messages) {
        const box = h("div", { class: "messages" }, h("div", { class: "label" }, "messages sent (" + c.messages.length + ")"));
        c.messages.forEach((m) => {
          box.append(longText(m.role, m.content, false, "msg " + m.role));
          // The pictures the message showed, as the model got them (stored once per game).
          (m.images || []).forEach((sha) => {
            const url = (state.game.images || {})[sha];
            box.append(url
              ? h("img", { class: "shown", src: url, alt: "the picture sent with this message", title: "sha256 " + sha })
              : h("p", { class: "note" }, "a picture was sent here (sha256 " + sha + "), but the store does not hold it"));
          });
        });
        card.append(box);
      } else if (c.request) {
        card.append(longText("request", c.request, false, "msg"));
      }
      card.append(longText("reply", c.reply === null || c.reply === undefined ? "(no reply)" : c.reply, true, "reply"));
      if (c.reasoning) card.append(longText("reasoning", c.reasoning, false, "reasoning"));
      if (c.detail) card.append(h("p", { class: ok || sample ? "detail" : "feedback" }, h("span", { class: "k" }, ok ? "read as " : sample ? "vote: " : "feedback / detail: "), c.detail));
      panel.append(card);
    });
  }

  function route() {
    const m = /^#game=(\d+)(?:&ply=(\d+))?/.exec(location.hash);
    if (m) open(m[1], m[2] === undefined ? undefined : Number(m[2]));
    else if (!$("viewer").hidden) close();
  }

  document.addEventListener("keydown", (ev) => {
    if ($("viewer").hidden || ev.target.tagName === "INPUT" || ev.target.tagName === "SELECT") return;
    if (ev.key === "ArrowRight") { go(state.cursor + 1); ev.preventDefault(); }
    else if (ev.key === "ArrowLeft") { go(state.cursor - 1); ev.preventDefault(); }
    else if (ev.key === "Home") { go(0); ev.preventDefault(); }
    else if (ev.key === "End") { go(state.entries.length - 1); ev.preventDefault(); }
    else if (ev.key === "Escape") close();
    else if (ev.key === "f") { state.flipped = !state.flipped; go(state.cursor); }
  });
  $("v-close").addEventListener("click", close);
  $("v-first").addEventListener("click", () => go(0));
  $("v-prev").addEventListener("click", () => go(state.cursor - 1));
  $("v-next").addEventListener("click", () => go(state.cursor + 1));
  $("v-last").addEventListener("click", () => go(state.entries.length - 1));
  $("v-flip").addEventListener("click", () => { state.flipped = !state.flipped; go(state.cursor); });
  $("v-jump").addEventListener("change", () => go(Number($("v-jump").value) || 0));
  document.querySelectorAll("div.games").forEach(setupFilters);
  // For live pages: read a game again (it got a new ply) and, if it is open, show it again,
  // following the last ply when the reader was on it.
  window.arenaViewer = {
    openGame: () => (state.game && !$("viewer").hidden ? state.game.id : null),
    refresh: async (id) => {
      cache.delete(String(id));
      cache.delete(Number(id));
      if (!state.game || String(state.game.id) !== String(id) || $("viewer").hidden) return;
      const atEnd = state.cursor >= state.entries.length - 1;
      const cursor = state.cursor;
      state.game = null;
      await open(String(id), atEnd ? Number.MAX_SAFE_INTEGER : cursor);
    },
  };
  window.addEventListener("hashchange", route);
  route();
  document.documentElement.dataset.ready = "1";
})();
