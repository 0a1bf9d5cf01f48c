// Opens a tournament page of `arena serve` in Debian's headless chromium (through playwright-core)
// while `arena run` plays it, and checks that the page follows the games without a reload: the
// open game's move list and board grow, and the leaderboard counts a game that finished. Run by
// tests/integration/serve.rs as `node serve.mjs SPEC.json`; prints one line of JSON; exits 1 with
// the failures listed when a check fails.
import { readFileSync } from "node:fs";
import { openPage } from "./chromium.mjs";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };

// Anything but the server itself is refused and counted.
const { browser, page, refused: outside, consoleErrors, dialogs } =
  await openPage(spec.chromium, (url) => url.startsWith(spec.base));

await page.goto(spec.base + "/tournaments/" + spec.tournament);
await page.waitForSelector("html[data-ready='1']", { timeout: 30000 });
await page.waitForSelector("html[data-live='1']", { timeout: 30000 });
await page.waitForSelector("#leaderboard[data-finished]", { timeout: 60000 });
const finishedAtStart = Number(await page.locator("#leaderboard").getAttribute("data-finished"));
// A marker that a reload would lose.
await page.evaluate(() => { window.__same_page = true; });

// Open the running game; its moves must grow while the page stays open.
const running = page.locator("tr.game[data-status='running']").first();
await running.waitFor({ timeout: 60000 });
await running.click();
await page.waitForSelector("#viewer:not([hidden]) #v-ply-title");
// On the last ply, the viewer follows the game. A key pressed while a new ply's refresh replaces
// the open game can be lost, so End is pressed until the last move is the one shown.
await page.keyboard.press("End");
await page.waitForFunction(() => {
  const items = document.querySelectorAll("#v-moves li");
  const last = items[items.length - 1];
  if (last && last.classList.contains("current")) return true;
  document.dispatchEvent(new KeyboardEvent("keydown", { key: "End", bubbles: true }));
  return false;
}, null, { timeout: 30000, polling: 250 });
const movesAtOpen = await page.locator("#v-moves li.mv").count();
const fenAtOpen = await page.locator("#v-fen").textContent();
await page.screenshot({ path: spec.screenshots + "/live-game.png", fullPage: false });
await page.waitForFunction((n) => document.querySelectorAll("#v-moves li.mv").length > n + 1, movesAtOpen, { timeout: 120000 });
const movesLater = await page.locator("#v-moves li.mv").count();
const fenLater = await page.locator("#v-fen").textContent();
check(movesLater > movesAtOpen, `the open game's moves went from ${movesAtOpen} to ${movesLater}`);
check(fenLater !== fenAtOpen, "the board followed the game (the FEN shown changed)");
await page.screenshot({ path: spec.screenshots + "/live-game-later.png", fullPage: false });

// Close the viewer; a game that finishes moves into the leaderboard.
await page.keyboard.press("Escape");
await page.waitForFunction((n) => {
  const b = document.getElementById("leaderboard");
  return b && Number(b.dataset.finished) > n;
}, finishedAtStart, { timeout: 180000 });
const standings = await page.locator("#leaderboard").textContent();
check(standings.includes("standings"), "the leaderboard shows the standings");
check(await page.evaluate(() => window.__same_page === true), "the page was not reloaded");
await page.screenshot({ path: spec.screenshots + "/live-overview.png", fullPage: true });

check(outside.length === 0, `requests left the server: ${outside}`);
check(consoleErrors.length === 0, `console errors (a blocked script or style shows here): ${consoleErrors}`);
check(dialogs.length === 0, `dialogs opened: ${dialogs}`);
await browser.close();
console.log(JSON.stringify({ ok: failures.length === 0, failures, moves_at_open: movesAtOpen, moves_later: movesLater, finished_at_start: finishedAtStart }));
process.exit(failures.length ? 1 : 0);
