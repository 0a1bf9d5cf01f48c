// Opens a report's viewer at one ply whose attempt card holds long unbroken text (a model name, a
// reply, feedback) in Debian's headless chromium, 1400 × 1000, and checks that nothing in the
// card runs past its right edge or the window's, and that scrolling the viewer brings the card's
// bottom into view. Run by tests/integration/report.rs as `node attempt.mjs SPEC.json`; prints one
// line of JSON; exits 1 with the failures listed when a check fails.
import { readFileSync } from "node:fs";
import { openPage } from "./chromium.mjs";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };
const { browser, page } = await openPage(spec.chromium, (url) => url.startsWith("file://"));
await page.goto(`file://${spec.report}#game=${spec.game}&ply=${spec.ply}`);
await page.waitForSelector("#v-ply .attempt", { timeout: 30000 });
// Every text open, as a reader would open them.
await page.evaluate(() => document.querySelectorAll("#v-ply details").forEach((d) => { d.open = true; }));
const cards = await page.evaluate(() => [...document.querySelectorAll("#v-ply .attempt")].map((card) => {
  const box = card.getBoundingClientRect();
  const widest = Math.max(...[...card.querySelectorAll("*")].map((e) => e.getBoundingClientRect().right));
  return { right: box.right, widest, scroll: card.scrollWidth, client: card.clientWidth };
}));
check(cards.length > 0, "no attempt card");
cards.forEach((c, i) => {
  check(c.widest <= c.right + 1, `card ${i + 1}: its content reaches x = ${c.widest}, past its edge at ${c.right}`);
  check(c.scroll <= c.client + 1, `card ${i + 1}: ${c.scroll} px wide inside ${c.client}`);
  check(c.right <= 1400, `card ${i + 1}: its edge at ${c.right} is past the window`);
});
const bottom = await page.evaluate(() => {
  const viewer = document.getElementById("viewer");
  viewer.scrollTop = viewer.scrollHeight;
  const cards = document.querySelectorAll("#v-ply .attempt");
  return cards[cards.length - 1].getBoundingClientRect().bottom;
});
check(bottom <= 1000, `the last card ends at y = ${bottom}, below the window even scrolled down`);
if (spec.screenshot) await page.screenshot({ path: spec.screenshot });
await browser.close();
console.log(JSON.stringify({ ok: failures.length === 0, failures, cards }));
process.exit(failures.length === 0 ? 0 : 1);
