import { Browser, Cookie, test } from "@playwright/test";
import { ADMIN } from "../tests/helpers";

// Chrome DevTools' "Fast 4G" preset as its source defines it (Fast4GConditions in
// front_end/core/sdk/NetworkManager.ts of devtools-frontend): 9 Mbit/s down and 1.5 up,
// derated to 90 %, and 60 ms of latency times 2.75.
const FAST_4G = {
  offline: false,
  downloadThroughput: ((9 * 1000 * 1000) / 8) * 0.9,
  uploadThroughput: ((1.5 * 1000 * 1000) / 8) * 0.9,
  latency: 60 * 2.75,
};
const RUNS = 5;

/** One cold load of `path` in a fresh context (empty cache, signed in by cookie): the time
 * from navigation to hydration (the app marks <html data-hydrated>, after which every control
 * works), on a page with a chart the time until it is drawn (`chart`, its container's id),
 * and the bytes that crossed the network, as Chromium counts them (compressed). */
async function load(browser: Browser, cookie: Cookie, path: string, chart: string | null, throttled: boolean) {
  const context = await browser.newContext({ ignoreHTTPSErrors: true });
  await context.addCookies([{ name: cookie.name, value: cookie.value, url: test.info().project.use.baseURL!, secure: cookie.secure }]);
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.enable");
  await cdp.send("Network.setCacheDisabled", { cacheDisabled: true });
  if (throttled) await cdp.send("Network.emulateNetworkConditions", FAST_4G);
  let bytes = 0;
  cdp.on("Network.loadingFinished", (e: { encodedDataLength: number }) => (bytes += e.encodedDataLength));
  const started = Date.now();
  await page.goto(path);
  await page.locator("html[data-hydrated=true]").waitFor({ state: "attached", timeout: 120_000 });
  const ms = Date.now() - started;
  let chartMs: number | null = null;
  if (chart) {
    await page.locator(`#${chart}[data-drawn=true]`).waitFor({ state: "attached", timeout: 120_000 });
    chartMs = Date.now() - started;
  }
  // Late requests finish before the byte count is read.
  await page.waitForLoadState("networkidle");
  await context.close();
  return { ms, chartMs, bytes };
}

function median(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

test("page loads, cold cache: localhost and Fast 4G", async ({ browser, page }) => {
  await page.goto("/login");
  await page.locator("html[data-hydrated=true]").waitFor({ state: "attached" });
  await page.getByLabel("Username").fill(ADMIN.username);
  await page.getByLabel("Password").fill(ADMIN.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByTestId("current-user").waitFor();
  // Over TLS (`make bench-load-h2`) the cookie is Secure and carries the `__Host-` prefix.
  const session = (await page.context().cookies()).find((c) => c.name.endsWith("bulwark_session"));
  if (!session) throw new Error("no session cookie after signing in");

  const spread = (values: number[]) => `${median(values)} ms (${Math.min(...values)}–${Math.max(...values)})`;
  const lines = [
    `page | network | time to interactive, median (min–max) of ${RUNS} | chart drawn, likewise | transferred`,
  ];
  for (const [name, path, chart] of [
    ["Jobs", "/jobs", null],
    ["Job editor", "/jobs/new", "retry-chart"],
    ["Overview", "/", "runs-chart"],
  ] as const) {
    for (const throttled of [false, true]) {
      const runs = [];
      for (let i = 0; i < RUNS; i++) runs.push(await load(browser, session, path, chart, throttled));
      const charts = runs.flatMap((r) => (r.chartMs === null ? [] : [r.chartMs]));
      lines.push(
        `${name} | ${throttled ? "Fast 4G" : "localhost"} | ${spread(runs.map((r) => r.ms))} | ` +
          `${charts.length ? spread(charts) : "–"} | ${(median(runs.map((r) => r.bytes)) / 1000).toFixed(0)} KB`,
      );
    }
  }
  console.log("\n" + lines.join("\n"));
});
