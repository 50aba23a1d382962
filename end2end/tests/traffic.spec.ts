import { execFileSync } from "node:child_process";
import * as http from "node:http";
import { AddressInfo } from "node:net";
import * as path from "node:path";
import { expect, test } from "@playwright/test";
import { ADMIN, hydrated, signIn } from "./helpers";

// The server under test (start-server.sh) keeps its database here.
const database = path.resolve(__dirname, "../.run/e2e.db");
const env = { ...process.env, DATABASE_URL: `sqlite://${database}?mode=rwc` };

function bulwark(...args: string[]): string {
  return execFileSync(process.env.BULWARK_BIN!, args, { env, encoding: "utf8" });
}

/** Rows for one path, read with Python's sqlite3 so the check does not go through Bulwark. */
function rowsFor(pagePath: string): { count: number; referer: string; locale: string; is_bot: number }[] {
  const script = `
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.row_factory = sqlite3.Row
rows = db.execute("SELECT count, referer, locale, is_bot FROM traffic_statistics WHERE path = ?", (sys.argv[2],))
print(json.dumps([dict(r) for r in rows]))`;
  return JSON.parse(execFileSync("python3", ["-c", script, database, pagePath], { encoding: "utf8" }));
}

// Headless Chromium says "HeadlessChrome", which the classifier rightly files as a bot; this
// visitor plays a person on a desktop browser.
const PERSON_UA =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

test("a page on another site counts its views through collect.js, single-page navigation too", async ({ browser, baseURL }) => {
  const context = await browser.newContext({ userAgent: PERSON_UA });
  const page = await context.newPage();
  // Another site: a real server on another port, reached as localhost rather than 127.0.0.1
  // (Chromium refuses loopback requests from pages it does not know to be local).
  const site = http.createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html" });
    response.end(`<!doctype html><html><body><h1>Boutique</h1>
      <button onclick="history.pushState({}, '', '/fr/panier')">Panier</button>
      <script async src="${baseURL}/collect.js"></script></body></html>`);
  });
  await new Promise<void>((resolve) => site.listen(0, resolve));
  const siteUrl = `http://localhost:${(site.address() as AddressInfo).port}`;
  const beacons: string[] = [];
  page.on("request", (r) => {
    if (r.url().endsWith("/api/collect")) beacons.push(r.postData() ?? "");
  });
  await page.goto(`${siteUrl}/fr/accueil`, { referer: "https://www.example.org/search" });
  await expect.poll(() => beacons.length).toBe(1);
  await page.getByRole("button", { name: "Panier" }).click();
  await expect.poll(() => beacons.length).toBe(2);
  expect(JSON.parse(beacons[1]).referrer).toBe(`${siteUrl}/fr/accueil`);
  site.close();

  const out = bulwark("traffic", "flush");
  expect(out).toMatch(/total: \d+ rows/);
  const home = rowsFor("/fr/accueil");
  expect(home).toHaveLength(1);
  expect(home[0]).toMatchObject({ count: 1, locale: "fr", is_bot: 0, referer: "https://www.example.org/search" });
  const cart = rowsFor("/fr/panier");
  expect(cart).toHaveLength(1);
  expect(cart[0].referer).toBe(`${siteUrl}/fr/accueil`);
  await context.close();
});

test("the traffic flush and cleanup are built-in jobs on the Jobs page", async ({ page }) => {
  await signIn(page, ADMIN);
  await page.goto("/jobs");
  await hydrated(page);
  await expect(page.locator('tr[data-job="traffic-flush"]')).toContainText("traffic-flush");
  await expect(page.locator('tr[data-job="traffic-clean"]')).toBeVisible();
  // Run the flush job now: the run page follows it to success and shows what it wrote.
  await page.locator('tr[data-job="traffic-flush"]').getByRole("button", { name: "Run now" }).click();
  await expect(page).toHaveURL(/\/runs\/\d+$/);
  await expect(page.getByTestId("run-status")).toHaveText("succeeded", { timeout: 30_000 });
  await expect(page.locator("body")).toContainText("total:");
});
