// Opens a placement's arena HTML report in Debian's headless chromium (through playwright-core)
// and checks its cost-versus-rating chart as a reader sees it: one dot per priced model, the
// dearer model further right, the stronger one higher, each with its interval. Run by
// tests/integration/placement.rs as `node placement.mjs SPEC.json`; SPEC names the report, where
// the screenshot goes and each model's Elo and cost from the store. Prints one line of JSON;
// exits 1 with the failures listed when a check fails.
import { readFileSync } from "node:fs";
import { openPage } from "./chromium.mjs";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };

const { browser, page, refused: requests, consoleErrors } =
  await openPage(spec.chromium, (url) => url.startsWith("file://"));
await page.goto("file://" + spec.report);
await page.waitForSelector("html[data-ready='1']", { timeout: 30000 });

const plot = page.locator("svg#cost-rating-plot");
check(await plot.isVisible(), "the cost-versus-rating chart is visible");
await plot.scrollIntoViewIfNeeded();
// Each model as drawn: its dot's centre and its whisker's length, in screen coordinates.
const drawn = await plot.evaluate((svg) => {
  const out = {};
  for (const g of svg.querySelectorAll("g.series")) {
    const name = g.querySelector("text.label").textContent;
    const dot = g.querySelector("circle.dot").getBoundingClientRect();
    const whisker = g.querySelector("line.whisker").getBoundingClientRect();
    out[name] = { x: dot.x + dot.width / 2, y: dot.y + dot.height / 2, whisker: whisker.height,
      fill: getComputedStyle(g.querySelector("circle.dot")).fill };
  }
  return out;
});
check(Object.keys(drawn).length === spec.models.length, `one dot per model: ${JSON.stringify(drawn)}`);
for (const m of spec.models) {
  const d = drawn[m.name];
  check(d !== undefined, `${m.name} is drawn`);
  if (d) check(d.whisker > 0 && d.fill !== "none", `${m.name}: dot and interval drawn (${JSON.stringify(d)})`);
}
// Dearer to the right (a log axis keeps the order), stronger higher (SVG y grows downwards).
const [a, b] = spec.models;
if (drawn[a.name] && drawn[b.name]) {
  check((a.usd < b.usd) === (drawn[a.name].x < drawn[b.name].x), `cost order: ${JSON.stringify({ a, b, drawn })}`);
  if (Math.abs(a.elo - b.elo) > 1) {
    check((a.elo > b.elo) === (drawn[a.name].y < drawn[b.name].y), `Elo order: ${JSON.stringify({ a, b, drawn })}`);
  }
}
const ticks = await plot.locator("text.tick").allTextContents();
check(ticks.some((t) => t.startsWith("$")), `the cost axis is in dollars: ${ticks}`);
await plot.screenshot({ path: spec.screenshots + "/placement.png" });

check(requests.length === 0, `requests left the page: ${requests}`);
check(consoleErrors.length === 0, `console errors: ${consoleErrors}`);
await browser.close();
console.log(JSON.stringify({ ok: failures.length === 0, failures, drawn }));
process.exit(failures.length ? 1 : 0);
