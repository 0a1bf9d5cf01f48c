// Opens `arena serve`'s play page of a game a model lost by forfeit, in Debian's headless chromium,
// and checks that it lists the replies the model's play mode refused on that turn, each with its
// outcome and its text. Run by tests/integration/play.rs as `node play_rejected.mjs SPEC.json`;
// prints one line of JSON; exits 1 with the failures listed.
import { readFileSync } from "node:fs";
import { openPage } from "./chromium.mjs";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };
const { browser, page, consoleErrors } = await openPage(
  spec.chromium, (url) => url.startsWith(spec.base) || url.startsWith("data:"));
await page.goto(spec.base + "/play?token=" + spec.token);
await page.goto(`${spec.base}/play/${spec.game}`);
await page.waitForSelector("html[data-ready='1']", { timeout: 30000 });
const section = page.locator("#rejected-section");
check(await section.isVisible(), "the refused replies are not shown");
const items = await page.locator("#rejected li").evaluateAll((lis) => lis.map((li) => ({
  outcome: li.querySelector(".outcome").textContent,
  reply: li.querySelector("pre").textContent,
})));
check(items.length === spec.rejected, `${items.length} refused replies shown, expected ${spec.rejected}`);
for (const [i, item] of items.entries()) {
  check(item.outcome.startsWith("illegal"), `reply ${i + 1}: outcome "${item.outcome}"`);
  check(item.reply.includes(spec.contains), `reply ${i + 1}: "${item.reply}" lacks ${spec.contains}`);
}
// Hidden with the model's replies.
await page.locator("#show-reply").uncheck();
await page.waitForFunction(() => document.getElementById("rejected-section").hidden);
check(consoleErrors.length === 0, `console errors: ${consoleErrors}`);
if (spec.screenshot) await page.screenshot({ path: spec.screenshot });
await browser.close();
console.log(JSON.stringify({ ok: failures.length === 0, failures, items: items.length }));
process.exit(failures.length === 0 ? 0 : 1);
