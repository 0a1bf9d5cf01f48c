// Opens an experiment's arena HTML report in Debian's headless chromium (through playwright-core)
// and checks its charts as a reader sees them: each arm's LLR path ends at its verdict's bound,
// the differences are drawn with their intervals. Run by tests/integration/report.rs as
// `node experiment.mjs SPEC.json`; SPEC names the report, where the screenshot goes and what the
// store says (each arm's verdict and pairs). Prints one line of JSON; exits 1 with the failures
// listed when a check fails.
import { readFileSync } from "node:fs";
import { openPage } from "./chromium.mjs";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };

const { browser, page, refused: requests, consoleErrors } =
  await openPage(spec.chromium, (url) => url.startsWith("file://"));
await page.goto("file://" + spec.report);
await page.waitForSelector("html[data-ready='1']", { timeout: 30000 });

const plot = page.locator("svg#llr-plot");
check(await plot.isVisible(), "the LLR chart is visible");
await plot.scrollIntoViewIfNeeded();
// Each arm's path as drawn: its last point and its bounds, in screen coordinates.
const arms = await plot.evaluate((svg) => {
  const out = {};
  for (const line of svg.querySelectorAll("polyline.llr")) {
    const colour = [...line.classList].find((c) => /^c\d$/.test(c));
    const pts = line.getAttribute("points").trim().split(" ");
    const [x, y] = pts[pts.length - 1].split(",").map(Number);
    const bounds = [...svg.querySelectorAll(`line.bound.${colour}`)].map((b) => Number(b.getAttribute("y1")));
    const box = line.getBoundingClientRect();
    out[line.dataset.arm] = { points: pts.length, x, y, top: Math.min(...bounds), bottom: Math.max(...bounds),
      width: box.width, stroke: getComputedStyle(line).stroke };
  }
  return out;
});
for (const arm of spec.arms) {
  const drawn = arms[arm.name];
  check(drawn !== undefined, `the LLR chart has a path for ${arm.name}: ${JSON.stringify(arms)}`);
  if (!drawn) continue;
  check(drawn.points === arm.pairs + 1, `${arm.name}: ${drawn.points} points for ${arm.pairs} pairs (and the start)`);
  check(drawn.width > 0 && drawn.stroke !== "none", `${arm.name}: the path is drawn (${JSON.stringify(drawn)})`);
  // SVG y grows downwards: H1's bound is the upper (smaller y) line.
  if (arm.verdict === "H1") check(drawn.y <= drawn.top + 0.5, `${arm.name}: H1, yet its path ends below the H1 bound`);
  if (arm.verdict === "H0") check(drawn.y >= drawn.bottom - 0.5, `${arm.name}: H0, yet its path ends above the H0 bound`);
  if (arm.verdict === "undecided") check(drawn.y > drawn.top && drawn.y < drawn.bottom, `${arm.name}: undecided, yet past a bound`);
}
check(Object.keys(arms).length === spec.arms.length, `one path per arm: ${Object.keys(arms)}`);
const legend = await plot.locator("text.legend").allTextContents();
check(spec.arms.every((a) => legend.some((l) => l.startsWith(`${a.name}: ${a.verdict} after ${a.pairs} pairs`))),
  `the legend names each arm's verdict: ${legend}`);
// The differences: one chart per figure, one dot per arm, whiskers where there is an interval.
const illegal = page.locator("svg#difference-illegal_pct");
check(await illegal.isVisible(), "the illegal-move difference chart is visible");
check(await illegal.locator("circle.dot").count() === spec.arms.length, "one dot per arm in the illegal-move chart");
check(await illegal.locator("line.whisker").count() >= 1, "the illegal-move differences have intervals");
check(await page.locator("p.verdict", { hasText: spec.verdict_line }).count() === 1,
  `the report says "${spec.verdict_line}"`);
await plot.screenshot({ path: spec.screenshots + "/experiment.png" });

check(requests.length === 0, `requests left the page: ${requests}`);
check(consoleErrors.length === 0, `console errors: ${consoleErrors}`);
await browser.close();
console.log(JSON.stringify({ ok: failures.length === 0, failures, arms }));
process.exit(failures.length ? 1 : 0);
