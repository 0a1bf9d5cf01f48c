// arena serve: the play page, a person's board (chessground, vendored and served by arena serve).
// Written for arena (GPL-3.0-or-later). The server computes the legal moves (`dests`) and checks
// every move again; this page only shows the stored game and sends the person's choices. Every
// text from the store is set with textContent, never as markup. Writes carry the HttpOnly cookie
// the `/play?token=` address set; the page never sees the token.
import { Chessground } from "/assets/chessground.js";

const body = document.body;
const gameId = body.dataset.game;
const $ = (id) => document.getElementById(id);
const root = document.documentElement.dataset;
let state = null;
let sending = false;
let showReply = null;
let clockBase = null; // { at, white, black } when the state was read

const cg = Chessground($("board"), {
  movable: { free: false, showDests: true, events: { after: onMove } },
  premovable: { enabled: false },
  draggable: { showGhost: true },
  animation: { enabled: true, duration: 120 },
});

function say(text) { $("message").textContent = text || ""; }

async function send(action, payload) {
  if (sending) return false;
  sending = true;
  try {
    const res = await fetch(`/api/play/${gameId}/${action}`, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(payload || {}),
    });
    if (!res.ok) {
      shownKey = ""; // the piece goes back where the stored game has it
      say((await res.text()).trim());
      root.lastError = String(res.status);
      return false;
    }
    say("");
    return true;
  } finally {
    sending = false;
    await load();
  }
}

let promoting = null;
function onMove(orig, dest) {
  if (!state) return;
  if (state.promotions.includes(orig + dest)) {
    promoting = orig + dest;
    $("promotion").hidden = false;
    return;
  }
  send("move", { uci: orig + dest, ply: state.ply });
}
$("promotion").addEventListener("click", (ev) => {
  const piece = ev.target.dataset && ev.target.dataset.piece;
  if (!piece || !promoting) return;
  const uci = promoting + piece;
  promoting = null;
  $("promotion").hidden = true;
  send("move", { uci, ply: state.ply });
});
$("resign").addEventListener("click", () => send("resign", {}));
$("draw").addEventListener("click", () => send("draw", {}));
$("show-reply").addEventListener("change", (ev) => { showReply = ev.target.checked; load(); });

function fmt(ms) {
  if (ms === null || ms === undefined) return "";
  const s = Math.max(0, Math.floor(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

function tickClocks() {
  if (!state || !clockBase) return;
  const you = state.you || "white";
  const other = you === "white" ? "black" : "white";
  for (const [id, side] of [["clock-bottom", you], ["clock-top", other]]) {
    let ms = clockBase[side];
    const running = state.status === "running" && state.turn === side;
    if (running && ms !== null && ms !== undefined) ms -= Date.now() - clockBase.at;
    $(id).textContent = fmt(ms);
    $(id).classList.toggle("running", running && ms !== null && ms !== undefined);
  }
}

let shownKey = "";
function render(s) {
  const over = s.status === "finished";
  const you = s.you || "white";
  // The board is set again only when the game changed: setting it drops a selected piece or
  // a drag in progress.
  const key = [s.fen, s.your_turn, s.status, s.ply].join("|");
  if (key !== shownKey) { shownKey = key; setBoard(s, you); }
  renderText(s, over, you);
}

function setBoard(s, you) {
  cg.set({
    fen: s.fen,
    orientation: you,
    turnColor: s.turn,
    check: s.check ? s.turn : false,
    lastMove: s.last_move || undefined,
    movable: {
      color: s.your_turn ? you : undefined,
      dests: new Map(Object.entries(s.your_turn ? s.dests : {})),
    },
  });
}

function renderText(s, over, you) {
  $("players").textContent = `${s.white} (white) – ${s.black} (black)`;
  let status;
  if (over) status = `Game over: ${s.result} (${s.termination})${s.reason ? " — " + s.reason : ""}`;
  else if (s.status !== "running") status = `The game is ${s.status}: arena run plays it.`;
  else if (s.pending) status = "Your move is stored; arena run is playing it …";
  else if (s.your_turn) status = `Your move (${you}).`;
  else status = `${s.turn === "white" ? s.white : s.black} is thinking …`;
  if (s.draw === "declined" && !over) status += " Your draw offer was declined.";
  else if (s.draw === "offered" && !over) status += " Draw offered.";
  $("status").textContent = status;
  const moves = $("moves");
  // One numbered item per full move: White's move, then Black's. A game that starts with Black
  // to move (a position from a book or a FEN) opens with "…" for White's move.
  const blackFirst = (s.ply % 2 === 0) === (s.turn === "black");
  const sans = blackFirst ? ["…", ...s.moves] : s.moves;
  const pairs = [];
  for (let i = 0; i < sans.length; i += 2) pairs.push(sans.slice(i, i + 2).join(" "));
  moves.replaceChildren(...pairs.map((text) => {
    const li = document.createElement("li");
    li.textContent = text;
    return li;
  }));
  $("reply").textContent = showReply ? (s.reply || "") : "(hidden)";
  // The replies the opponent's play mode refused on its last turn (all of them, after a
  // forfeit): outcome first, then the reply as written.
  const rejected = showReply ? (s.rejected || []) : [];
  $("rejected-section").hidden = rejected.length === 0;
  $("rejected").replaceChildren(...rejected.map((r) => {
    const li = document.createElement("li");
    const head = document.createElement("div");
    head.className = "outcome";
    head.textContent = r.outcome + (r.detail ? ": " + r.detail : "");
    const text = document.createElement("pre");
    text.className = "reply";
    text.textContent = r.reply || "(no reply text)";
    li.append(head, text);
    return li;
  }));
  root.rejected = String(rejected.length);
  $("resign").disabled = over || s.status !== "running";
  $("draw").disabled = over || s.status !== "running";
  clockBase = { at: Date.now(), white: s.clocks.white, black: s.clocks.black };
  tickClocks();
  root.ply = s.ply;
  root.status = s.status;
  root.yourTurn = s.your_turn ? "1" : "0";
  root.result = s.result || "";
  root.draw = s.draw || "";
  root.ready = "1";
}

async function load() {
  const res = await fetch(`/api/play/${gameId}?reply=${showReply ? 1 : 0}`, { credentials: "same-origin" });
  if (!res.ok) { say((await res.text()).trim()); return; }
  const s = await res.json();
  if (showReply === null) {
    showReply = s.show_reply;
    $("show-reply").checked = showReply;
    if (showReply) return load();
  }
  state = s;
  render(s);
}

await load();
// The run and the model move in another process: look at the stored game twice a second.
setInterval(() => { if (!sending && !promoting) load(); }, 500);
setInterval(tickClocks, 250);
