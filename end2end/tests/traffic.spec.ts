import * as http from "node:http";
import { AddressInfo } from "node:net";
import { execFileSync } from "node:child_process";
import { expect, test } from "@playwright/test";
import { ADMIN, bulwark, DATABASE, hydrated, signIn } from "./helpers";

/** Rows for one path, read with Python's sqlite3 so the check does not go through Bulwark. */
function rowsFor(pagePath: string): { count: number; referer: string; locale: string; is_bot: number }[] {
  const script = `
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.row_factory = sqlite3.Row
rows = db.execute("SELECT count, referer, locale, is_bot FROM traffic_statistics WHERE path = ?", (sys.argv[2],))
print(json.dumps([dict(r) for r in rows]))`;
  return JSON.parse(execFileSync("python3", ["-c", script, DATABASE, pagePath], { encoding: "utf8" }));
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
  // Each report and the server's answer to it: 204 once the hit is counted in its buffer.
  const beacons: { body: string; status: number }[] = [];
  page.on("response", (r) => {
    if (r.url().endsWith("/api/collect")) beacons.push({ body: r.request().postData() ?? "", status: r.status() });
  });
  await page.goto(`${siteUrl}/fr/accueil`, { referer: "https://www.example.org/search" });
  await expect.poll(() => beacons.map((b) => b.status)).toEqual([204]);
  await page.getByRole("button", { name: "Panier" }).click();
  await expect.poll(() => beacons.map((b) => b.status)).toEqual([204, 204]);
  expect(JSON.parse(beacons[1].body).referrer).toBe(`${siteUrl}/fr/accueil`);
  site.close();

  const out = bulwark("traffic", "flush");
  expect(out).toMatch(/total: \d+ rows/);
  // The command or the server's own scheduled flush, whichever took the hits, has written
  // them; the test waits for its own rows rather than for one particular flush.
  await expect.poll(() => rowsFor("/fr/accueil").length).toBe(1);
  expect(rowsFor("/fr/accueil")[0]).toMatchObject({
    count: 1,
    locale: "fr",
    is_bot: 0,
    referer: "https://www.example.org/search",
  });
  await expect.poll(() => rowsFor("/fr/panier").length).toBe(1);
  expect(rowsFor("/fr/panier")[0].referer).toBe(`${siteUrl}/fr/accueil`);
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

test("an administrator adds a goal; a page's events convert, and the dashboard shows the rate; a report is set and stopped", async ({ browser, page, baseURL }) => {
  await signIn(page, ADMIN);
  await page.goto("/traffic/sites");
  await hydrated(page);
  await page.locator("#site-host").fill("localhost");
  await page.getByTestId("add-site").getByRole("button", { name: "Register" }).click();
  await expect(page.locator('section[data-site="localhost"]')).toBeVisible();
  try {
    await goalConverts(browser, page, baseURL!);
  } finally {
    // A registered site closes collection to every other one (see dashboard.spec.ts).
    const sites: { host: string }[] = JSON.parse(bulwark("site", "list", "--json"));
    if (sites.some((s) => s.host === "localhost")) bulwark("site", "remove", "localhost");
  }
});

/** The rest of the test above, once `localhost` is a registered site. */
async function goalConverts(browser: import("@playwright/test").Browser, page: import("@playwright/test").Page, baseURL: string) {
  // A bad pattern is refused with its reason; a goal on the site's event is added.
  const form = page.getByTestId("add-goal");
  await form.locator("#goal-site").selectOption("localhost");
  await form.locator("#goal-name").fill("Signed up");
  await form.locator("#goal-kind").selectOption("page");
  await form.locator("#goal-target").fill("signup");
  await form.getByRole("button", { name: "Add goal" }).click();
  await expect(form).toContainText("starts with /");
  await form.locator("#goal-kind").selectOption("event");
  await form.locator("#goal-target").fill("Signup");
  await form.getByRole("button", { name: "Add goal" }).click();
  const goals = page.getByTestId("goals");
  await expect(goals.locator('tr[data-name="Signed up"]')).toContainText("Signup");

  // A visitor views the pricing page, which queues an event before collect.js loads, and
  // signs up.
  const context = await browser.newContext({ userAgent: PERSON_UA });
  const visitor = await context.newPage();
  const site = http.createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html" });
    response.end(`<!doctype html><html><body><h1>Pricing</h1>
      <script>window.bulwark = window.bulwark || { q: [], event: function () { this.q.push(arguments); } };
        bulwark.event("Viewed pricing");</script>
      <button onclick="bulwark.event('Signup', { plan: 'pro', seats: 3 })">Sign up</button>
      <script async src="${baseURL}/collect.js"></script></body></html>`);
  });
  await new Promise<void>((resolve) => site.listen(0, resolve));
  const siteUrl = `http://localhost:${(site.address() as AddressInfo).port}`;
  const reports: number[] = [];
  visitor.on("response", (r) => {
    if (r.url().includes("/api/collect")) reports.push(r.status());
  });
  await visitor.goto(`${siteUrl}/pricing`);
  await expect.poll(() => reports).toEqual([204, 204]);
  await visitor.getByRole("button", { name: "Sign up" }).click();
  await expect.poll(() => reports).toEqual([204, 204, 204]);
  site.close();
  await context.close();

  bulwark("traffic", "flush");
  const converted = () => {
    const stats = JSON.parse(bulwark("traffic", "stats", "--json", "--range", "today", "--site", "localhost"));
    return stats.goals.map((g: { name: string; conversions: number }) => `${g.name} ${g.conversions}`);
  };
  await expect.poll(converted).toEqual(["Signed up 1"]);

  await page.goto("/traffic?range=today&site=localhost");
  await hydrated(page);
  const card = page.getByTestId("goals");
  const goal = card.locator('tr[data-name="Signed up"]');
  await expect(goal.getByTestId("conversions")).toHaveText("1");
  await expect(goal.getByTestId("rate")).toHaveText("100 %");
  await expect(card.getByTestId("events").locator('tr[data-name="Signup"]')).toContainText("plan = pro");
  await expect(card.getByTestId("events").locator('tr[data-name="Viewed pricing"]')).toBeVisible();

  // Removing the goal takes it off the dashboard; the events stay.
  await page.goto("/traffic/sites");
  await hydrated(page);
  await page.getByTestId("goals").locator('tr[data-name="Signed up"]').getByRole("button", { name: "Remove" }).click();
  await expect(page.getByTestId("goals").locator('tr[data-name="Signed up"]')).toHaveCount(0);

  // A report: a bad address is refused with its reason; a good one is listed, then stopped.
  const report = page.getByTestId("set-report");
  await report.locator("#report-site").selectOption("localhost");
  await report.locator("#report-to").fill("not-an-address");
  await report.getByRole("button", { name: "Save report" }).click();
  await expect(report).toContainText('"not-an-address" is not an e-mail address');
  await report.locator("#report-every").selectOption("day");
  await report.locator("#report-to").fill("owner@example.com");
  await report.getByRole("button", { name: "Save report" }).click();
  const row = page.getByTestId("reports").locator('tr[data-site="localhost"]');
  await expect(row).toContainText("owner@example.com");
  expect(JSON.parse(bulwark("site", "report", "localhost", "--json"))).toEqual({
    site: "localhost",
    every: "day",
    to: ["owner@example.com"],
    channels: [],
  });
  await row.getByRole("button", { name: "Stop" }).click();
  await expect(row).toHaveCount(0);
}

test("a share link shows a site's people to a browser without an account, nothing of the console's own, and is gone once revoked", async ({ browser, page, baseURL }) => {
  await signIn(page, ADMIN);
  await page.goto("/traffic/sites");
  await hydrated(page);
  await page.locator("#site-host").fill("localhost");
  await page.getByTestId("add-site").getByRole("button", { name: "Register" }).click();
  await expect(page.locator('section[data-site="localhost"]')).toBeVisible();
  try {
    await sharedAndRevoked(browser, page, baseURL!);
  } finally {
    const sites: { host: string }[] = JSON.parse(bulwark("site", "list", "--json"));
    if (sites.some((s) => s.host === "localhost")) bulwark("site", "remove", "localhost");
  }
});

/** The rest of the test above, once `localhost` is a registered site. */
async function sharedAndRevoked(browser: import("@playwright/test").Browser, page: import("@playwright/test").Page, baseURL: string) {
  // A person visits the site's welcome page; the console's own pages were visited too (this
  // admin's), under the console's host.
  const context = await browser.newContext({ userAgent: PERSON_UA });
  const visitor = await context.newPage();
  const site = http.createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html" });
    response.end(`<!doctype html><html><body><h1>Welcome</h1><script async src="${baseURL}/collect.js"></script></body></html>`);
  });
  await new Promise<void>((resolve) => site.listen(0, resolve));
  const reports: number[] = [];
  visitor.on("response", (r) => {
    if (r.url().includes("/api/collect")) reports.push(r.status());
  });
  await visitor.goto(`http://localhost:${(site.address() as AddressInfo).port}/welcome-shared`);
  await expect.poll(() => reports).toEqual([204]);
  site.close();
  await context.close();
  bulwark("traffic", "flush");

  // The link, made on the Sites page and shown once.
  const form = page.getByTestId("make-share");
  await form.locator("#share-site").selectOption("localhost");
  await form.getByRole("button", { name: "Make link" }).click();
  const link = (await page.getByTestId("share-link").textContent())!.trim();
  expect(link).toMatch(/\/share\/[0-9a-f]{48}$/);
  await expect(page.getByTestId("shares").locator('tr[data-site="localhost"]')).toBeVisible();

  // A browser that never signed in sees the site's people and nothing of the console.
  const anonymous = await browser.newContext();
  const stranger = await anonymous.newPage();
  const shown = await stranger.goto(new URL(link).pathname);
  expect(shown!.status()).toBe(200);
  expect(shown!.headers()["x-robots-tag"]).toBe("noindex, nofollow");
  await hydrated(stranger);
  await expect(stranger.locator("h1")).toHaveText("localhost");
  await expect(stranger.getByTestId("fig-people").locator(".value")).toHaveText("1");
  await expect(stranger.getByTestId("share-pages")).toContainText("/welcome-shared");
  await expect(stranger.locator("#share-chart")).toBeVisible();
  const text = await stranger.locator("main").innerText();
  expect(text).not.toContain("/traffic");
  await expect(stranger.locator("nav a[href='/jobs']")).toHaveCount(0);
  // Another range is a link away.
  await stranger.getByTestId("share-ranges").getByRole("link", { name: "Last 7 days" }).click();
  await expect(stranger).toHaveURL(/range=7d/);
  await expect(stranger.getByTestId("share-pages")).toContainText("/welcome-shared");

  // Revoked on the Sites page: the link is gone.
  await page.getByTestId("shares").locator('tr[data-site="localhost"]').getByRole("button", { name: "Revoke" }).click();
  await expect(page.getByTestId("shares").locator('tr[data-site="localhost"]')).toHaveCount(0);
  const gone = await stranger.goto(new URL(link).pathname);
  expect(gone!.status()).toBe(404);
  await anonymous.close();
}
