// The one way arena's browser tests open Debian's headless chromium (through playwright-core,
// which brings no browser of its own): the launch flags, and a page whose requests outside what
// the test allows are refused and counted, with its console errors and dialogs collected.
import { chromium } from "playwright-core";

/// Launches chromium (`executable`, or Debian's) with no network of its own.
export function launch(executable) {
  return chromium.launch({
    executablePath: executable || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/// A browser and one page in a 1400 × 1000 window; a request whose URL `allowed` refuses is
/// aborted and listed in `refused`; console errors and dialogs (dismissed) are listed too.
export async function openPage(executable, allowed) {
  const browser = await launch(executable);
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const refused = [], consoleErrors = [], dialogs = [];
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (allowed(url)) return route.continue();
    refused.push(url);
    return route.abort();
  });
  const page = await context.newPage();
  page.on("console", (m) => { if (m.type() === "error") consoleErrors.push(m.text()); });
  page.on("pageerror", (e) => consoleErrors.push(String(e)));
  page.on("dialog", (d) => { dialogs.push(d.message()); d.dismiss(); });
  return { browser, context, page, refused, consoleErrors, dialogs };
}
