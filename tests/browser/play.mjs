// Plays a whole game of `arena serve`'s play page in Debian's headless chromium (through
// playwright-core) against the random mover that `arena run` plays: opens the play address with
// the token, clicks the person's pieces and their target squares on chessground's board until
// the game ends, and checks that the page shows the result. Run by tests/integration/play.rs as
// `node play.mjs SPEC.json`; prints one line of JSON; exits 1 with the failures listed.
import { readFileSync } from "node:fs";
import { openPage } from "./chromium.mjs";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };

const { browser, page, refused: outside, consoleErrors, dialogs } = await openPage(
  spec.chromium, (url) => url.startsWith(spec.base) || url.startsWith("data:"));

// The address `arena serve` printed: it keeps the token in a cookie and leaves the address bar.
await page.goto(spec.base + "/play?token=" + spec.token);
check(!page.url().includes("token"), `the token stayed in the address: ${page.url()}`);
await page.locator(`a[data-game='${spec.game}']`).click();
await page.waitForSelector("html[data-ready='1']", { timeout: 30000 });
await page.screenshot({ path: spec.screenshots + "/play-start.png" });

const board = page.locator("#board");
// The centre of square `sq` ("e2") on the board, as the person sees it.
async function centre(sq, orientation) {
  const box = await board.boundingBox();
  const size = box.width / 8;
  let file = sq.charCodeAt(0) - 97, rank = Number(sq[1]) - 1;
  if (orientation === "black") { file = 7 - file; rank = 7 - rank; }
  return { x: box.x + (file + 0.5) * size, y: box.y + (7 - rank + 0.5) * size };
}

let moves = 0;
for (let i = 0; i < 200; i++) {
  await page.waitForFunction(() => {
    const d = document.documentElement.dataset;
    return d.status === "finished" || d.yourTurn === "1";
  }, null, { timeout: 120000 });
  const status = await page.evaluate(() => document.documentElement.dataset.status);
  if (status === "finished") break;
  const state = await page.evaluate(async (id) => (await fetch("/api/play/" + id)).json(), spec.game);
  if (!state.your_turn) continue;
  // A move that does not promote when there is one (the promotion choice is tried when not).
  const all = Object.entries(state.dests).flatMap(([from, tos]) => tos.map((to) => from + to));
  const plain = all.filter((m) => !state.promotions.includes(m));
  const mv = plain.length ? plain[(moves * 7) % plain.length] : all[0];
  const from = await centre(mv.slice(0, 2), state.you);
  const to = await centre(mv.slice(2, 4), state.you);
  if (moves % 2 === 0) {
    // Click the piece, then its square.
    await page.mouse.click(from.x, from.y);
    await page.mouse.click(to.x, to.y);
  } else {
    // Drag it.
    await page.mouse.move(from.x, from.y);
    await page.mouse.down();
    await page.mouse.move(to.x, to.y, { steps: 5 });
    await page.mouse.up();
  }
  if (state.promotions.includes(mv)) {
    await page.locator("#promotion button[data-piece='q']").click();
  }
  await page.waitForFunction((ply) => {
    const d = document.documentElement.dataset;
    return d.status === "finished" || Number(d.ply) > ply;
  }, state.ply, { timeout: 60000 });
  moves++;
  if (moves === 1) await page.screenshot({ path: spec.screenshots + "/play-moved.png" });
}
const status = await page.locator("#status").textContent();
const result = await page.evaluate(() => document.documentElement.dataset.result);
check(moves >= 2, `the person made ${moves} moves`);
check(result !== "", "the page shows a result");
check(status.includes("Game over"), `the status says the game is over: ${status}`);
// The moves list numbers full moves: a person's move and the model's share one item.
const plies = Number(await page.evaluate(() => document.documentElement.dataset.ply));
const items = await page.locator("#moves li").count();
check(items === Math.ceil(plies / 2), `${plies} plies are listed as ${items} numbered moves`);
await page.screenshot({ path: spec.screenshots + "/play-over.png" });

check(outside.length === 0, `requests left the server: ${outside}`);
check(consoleErrors.length === 0, `console errors (a blocked script or style shows here): ${consoleErrors}`);
check(dialogs.length === 0, `dialogs opened: ${dialogs}`);
await browser.close();
console.log(JSON.stringify({ ok: failures.length === 0, failures, moves, result, status }));
process.exit(failures.length ? 1 : 0);
