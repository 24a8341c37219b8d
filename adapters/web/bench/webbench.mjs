// The browser half of `make bench`'s web phase (cmd/bench/web.go starts
// the server, imports the items and runs this). In Debian's Chromium, for
// each round: a full page load of a module's items list (a new page: the
// session is restored from the cookie, the first page is searched and
// rendered), then one state-filter change (Published → Concept) to its rows
// rendered. Prints one JSON line: {firstPageMs, filterMs, filterWhat, transferKB}.
import { chromium } from "@playwright/test";

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};
const base = env("BENCH_URL");
const rounds = Number(process.env.BENCH_ROUNDS ?? 15);
// Opened on the Published items, then switched to Concept: two disjoint
// sets, so the first row always changes.
const list = `${base}/cms/apps/${env("BENCH_APP")}/modules/${env("BENCH_MODULE")}/items?state=published`;

// Runs in the page before its scripts: notes when the items table first
// has rows (ms since navigation start, at the next animation frame, i.e.
// when they are painted), and offers a probe for a later change of rows.
function instrument() {
  const firstRow = () => document.querySelector('table[aria-label="Items"] tbody tr');
  const painted = (cb) => requestAnimationFrame(() => cb(performance.now()));
  new MutationObserver((_, obs) => {
    if (firstRow() && window.__firstRows === undefined) {
      window.__firstRows = null;
      painted((t) => (window.__firstRows = t));
      obs.disconnect();
    }
  }).observe(document, { childList: true, subtree: true });
  // The change is timed from the user's press (the pointerdown event the
  // click starts with), not from when the test tool began to act.
  window.__watchChange = () => {
    const before = firstRow()?.textContent;
    window.__changed = undefined;
    window.__t0 = undefined;
    document.addEventListener("pointerdown", (e) => (window.__t0 = e.timeStamp), { capture: true, once: true });
    const obs = new MutationObserver(() => {
      const now = firstRow()?.textContent;
      if (now !== undefined && now !== before && window.__changed === undefined) {
        window.__changed = null;
        obs.disconnect();
        painted((t) => (window.__changed = t - window.__t0));
      }
    });
    obs.observe(document.body, { childList: true, subtree: true, characterData: true });
  };
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
await context.addInitScript(instrument);

// Sign in once through the sign-in page: the refresh cookie stays in the context.
const signIn = await context.newPage();
await signIn.goto(`${base}/cms/sign-in`);
await signIn.getByLabel("Username").fill(env("BENCH_USER"));
await signIn.getByRole("textbox", { name: "Password" }).fill(env("BENCH_PASSWORD"));
await signIn.getByRole("button", { name: "Sign in" }).click();
await signIn.getByRole("button", { name: /Account: / }).waitFor();
await signIn.close();

const firstPageMs = [];
const filterMs = [];
let transferKB = 0;
for (let r = 0; r <= rounds; r++) {
  const page = await context.newPage();
  await page.goto(list, { waitUntil: "commit" });
  await page.waitForFunction(() => typeof window.__firstRows === "number", null, { timeout: 30_000 });
  const first = await page.evaluate(() => window.__firstRows);
  if (r === 0) {
    // A cold first round warms the server's caches and Chromium's; it also
    // tells how much JS and CSS the screen pulls in.
    transferKB = await page.evaluate(() =>
      performance.getEntriesByType("resource")
        .filter((e) => /\.(js|css)$/.test(new URL(e.name).pathname))
        .reduce((s, e) => s + e.transferSize, 0) / 1024);
  }
  await page.evaluate(() => window.__watchChange());
  await page.getByRole("radiogroup", { name: "State" }).getByText("Concept", { exact: true }).click();
  await page.waitForFunction(() => typeof window.__changed === "number", null, { timeout: 30_000 });
  const change = await page.evaluate(() => window.__changed);
  if (r > 0) {
    firstPageMs.push(Math.round(first));
    filterMs.push(Math.round(change));
  }
  console.error(`round ${r}${r === 0 ? " (warm-up)" : ""}: first page ${first.toFixed(0)} ms, filter change ${change.toFixed(0)} ms`);
  await page.close();
}
await browser.close();
console.log(JSON.stringify({ firstPageMs, filterMs, filterWhat: "state filter Published → Concept, from the press to its first page painted", transferKB }));
