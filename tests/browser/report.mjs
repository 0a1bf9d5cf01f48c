// Opens an arena HTML report in Debian's headless chromium (through playwright-core, which brings
// no browser of its own) and checks it as a reader would use it. Run by
// tests/integration/report.rs as `node report.mjs SPEC.json`; SPEC names the report, where the
// screenshots go, and what the store says the page must show. Prints one line of JSON; exits 1
// with the failures listed when a check fails.
import { readFileSync } from "node:fs";
import { openPage } from "./chromium.mjs";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };

// Every request is recorded; anything that is not the file itself is refused and counted.
const { browser, page, refused: requests, consoleErrors, dialogs } =
  await openPage(spec.chromium, (url) => url.startsWith("file://"));
page.on("request", (r) => { if (!r.url().startsWith("file://")) requests.push(r.url()); });

const t0 = Date.now();
await page.goto("file://" + spec.report);
await page.waitForSelector("html[data-ready='1']", { timeout: 30000 });
const loadMs = Date.now() - t0;

// Overview.
const rows = await page.locator("tr.game").count();
check(rows === spec.games, `games list has ${rows} rows, expected ${spec.games}`);
check(await page.locator("svg#ratings-plot circle.dot").count() === spec.players,
  "the ratings plot has one dot per player");
check(await page.locator("h4", { hasText: "engine analysis" }).count() === 1, "the analysis table is shown");
const scriptsBefore = await page.locator("script").count();
await page.screenshot({ path: spec.screenshots + "/overview.png", fullPage: false });

// Filters: the LLM player as White only.
const section = page.locator("div.games").first();
await section.locator("select[data-filter=player]").selectOption(spec.player);
await section.locator("select[data-filter=colour]").selectOption("white");
const visible = await section.locator("tr.game:not([hidden])").evaluateAll((rs) => rs.map((r) => r.dataset.white));
check(visible.length > 0 && visible.every((w) => w === spec.player), `filter by White = ${spec.player}: ${visible}`);
await section.locator("select[data-filter=colour]").selectOption("");
await section.locator("select[data-filter=player]").selectOption("");

// Open the game and step to the ply.
await page.locator(`tr.game[data-game='${spec.game}']`).click();
await page.waitForSelector("#viewer:not([hidden]) #v-ply-title");
check(await page.locator("#board rect.sq").count() === 64, "the board has 64 squares");
check(await page.locator("#board use.piece").count() === spec.pieces_after_first,
  "the pieces after the first ply");
const moves = await page.locator("#v-moves li button").allTextContents();
check(moves.length === spec.sans.length, `move list has ${moves.length} moves, expected ${spec.sans.length}`);
check(spec.sans.every((san, i) => moves[i] && moves[i].includes(san)), `move list ${moves} shows ${spec.sans}`);
check(await page.locator("#eval-graph path.line").count() === 1, "the evaluation graph is drawn");
const marks = await page.locator("#eval-graph circle.mark").count();
check(marks === spec.marks, `evaluation graph marks ${marks}, expected ${spec.marks}`);
// Step with the keyboard: from ply 0 (cursor 1) to the chosen ply, one back, one forward.
for (let i = 1; i < spec.ply + 1; i++) await page.keyboard.press("ArrowRight");
await page.keyboard.press("ArrowLeft");
await page.keyboard.press("ArrowRight");
const cursor = await page.locator("#v-jump").inputValue();
check(cursor === String(spec.ply + 1), `cursor ${cursor} after stepping, expected ${spec.ply + 1}`);
const title = await page.locator("#v-ply-title").textContent();
check(title.includes(spec.sans[spec.ply]), `ply title "${title}" names ${spec.sans[spec.ply]}`);
check(title.startsWith(`Ply ${spec.ply + 1} `), `ply title "${title}" counts the ply as the cursor does (${spec.ply + 1})`);
const fen = await page.locator("#v-fen").textContent();
check(fen === spec.fen_after, `FEN shown ${fen}, expected ${spec.fen_after}`);
// The address of that ply opens the same ply: board, FEN and header agree.
await page.keyboard.press("Home");
await page.evaluate((h) => { location.hash = h; }, `#game=${spec.game}&ply=${spec.ply + 1}`);
await page.waitForFunction((c) => document.getElementById("v-jump").value === c, String(spec.ply + 1));
const linkedTitle = await page.locator("#v-ply-title").textContent();
check(linkedTitle.startsWith(`Ply ${spec.ply + 1} `) && linkedTitle.includes(spec.sans[spec.ply]),
  `#game=${spec.game}&ply=${spec.ply + 1} shows the header "${linkedTitle}"`);
check(await page.locator("#v-fen").textContent() === spec.fen_after, `#game=${spec.game}&ply=${spec.ply + 1} shows another position`);

// The ply's attempts: messages, reply, and the hostile reply shown as text.
const attempts = page.locator("#v-ply .attempt");
check(await attempts.count() === spec.calls, `attempt cards ${await attempts.count()}, expected ${spec.calls}`);
const first = attempts.first();
for (const d of await first.locator(".messages details").all()) await d.locator("summary").click();
const sent = await first.locator(".messages").textContent();
check(sent.includes(spec.prompt), `the messages sent include "${spec.prompt}"`);
check(sent.includes(spec.system), `the messages sent include the system prompt "${spec.system}"`);
const reply = await first.locator("details.reply pre").textContent();
check(reply === spec.reply, `reply shown as ${JSON.stringify(reply)}, expected ${JSON.stringify(spec.reply)}`);
check(await page.locator("script").count() === scriptsBefore, "no script element was added");
check(await page.evaluate(() => window.__arena_pwned === undefined), "the injected reply ran no code");

// Jump to a ply through the mark on the graph, then flip.
if (marks > 0) {
  await page.locator("#eval-graph circle.mark").first().click();
  const at = await page.locator("#v-jump").inputValue();
  check(at === String(spec.first_mark), `clicking the first mark went to ${at}, expected ${spec.first_mark}`);
  await page.locator("#v-jump").fill(String(spec.ply + 1));
  await page.locator("#v-jump").dispatchEvent("change");
}
await page.locator("#v-flip").click();
check(await page.locator("#board rect[data-sq=a1]").getAttribute("x") === "315", "flipped board puts a1 top right");
await page.locator("#v-flip").click();
await page.screenshot({ path: spec.screenshots + "/viewer.png", fullPage: false });

check(requests.length === 0, `requests left the page: ${requests}`);
check(consoleErrors.length === 0, `console errors: ${consoleErrors}`);
check(dialogs.length === 0, `dialogs opened: ${dialogs}`);
await browser.close();
console.log(JSON.stringify({ ok: failures.length === 0, failures, load_ms: loadMs, rows, moves: moves.length, marks }));
process.exit(failures.length ? 1 : 0);
