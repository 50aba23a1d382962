import { Browser, test } from "@playwright/test";
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
 * works) and the bytes that crossed the network, as Chromium counts them (compressed). */
async function load(browser: Browser, cookie: string, path: string, throttled: boolean) {
  const context = await browser.newContext();
  await context.addCookies([{ name: "bulwark_session", value: cookie, url: test.info().project.use.baseURL! }]);
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
  // Charts and late requests finish before the byte count is read.
  await page.waitForLoadState("networkidle");
  await context.close();
  return { ms, bytes };
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
  const cookie = (await page.context().cookies()).find((c) => c.name === "bulwark_session")?.value;
  if (!cookie) throw new Error("no session cookie after signing in");

  const lines = ["page | network | time to interactive, median (min–max) of " + RUNS + " | transferred"];
  for (const [name, path] of [
    ["Jobs", "/jobs"],
    ["Job editor", "/jobs/new"],
    ["Overview", "/"],
  ]) {
    for (const throttled of [false, true]) {
      const runs = [];
      for (let i = 0; i < RUNS; i++) runs.push(await load(browser, cookie, path, throttled));
      const ms = runs.map((r) => r.ms);
      lines.push(
        `${name} | ${throttled ? "Fast 4G" : "localhost"} | ${median(ms)} ms (${Math.min(...ms)}–${Math.max(...ms)}) | ` +
          `${(median(runs.map((r) => r.bytes)) / 1000).toFixed(0)} KB`,
      );
    }
  }
  console.log("\n" + lines.join("\n"));
});
