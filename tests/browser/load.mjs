// Measures how long headless chromium takes to open an arena report and then one game in it:
// `node tests/browser/load.mjs REPORT.html [RUNS]` prints the medians (see README, "The HTML
// report at scale"). Not a test: nothing is asserted on time.
import { launch } from "./chromium.mjs";

const report = process.argv[2];
const runs = Number(process.argv[3] || 3);
const browser = await launch();
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const load = [], open = [];
for (let i = 0; i < runs; i++) {
  const page = await (await browser.newContext()).newPage();
  const t0 = Date.now();
  await page.goto("file://" + report, { timeout: 300000 });
  await page.waitForSelector("html[data-ready='1']", { timeout: 300000 });
  load.push(Date.now() - t0);
  const rows = page.locator("tr.game");
  const row = rows.nth(Math.floor((await rows.count()) / 2));
  const t1 = Date.now();
  await row.click();
  await page.waitForSelector("#viewer:not([hidden]) .attempt", { timeout: 60000 });
  open.push(Date.now() - t1);
  await page.context().close();
}
await browser.close();
console.log(JSON.stringify({ report, runs, load_ms: load, open_game_ms: open, median_load_ms: median(load), median_open_game_ms: median(open) }));
