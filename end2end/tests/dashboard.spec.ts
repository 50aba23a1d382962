import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { expect, Page, test } from "@playwright/test";
import { ADMIN, bulwark, daysBefore, hydrated, jobAction, serverToday, signIn, VIEWER } from "./helpers";

const PERSON = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";
const GOOGLE = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const BING = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)";
const GPTBOT =
  "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)";

// A day that holds only what this file imports: two days before the server's today, so before
// the server started whenever this file runs (the suite, started at most a day ago, counts its
// own page views from that day on). Asked once and named as `from=DAY&to=DAY`, never as
// `range=yesterday`, which moves at midnight and may then hold the other tests' traffic.
let day = "";
const onDay = () => `from=${day}&to=${day}`;
// ip, path, User-Agent and, when not 200, the status the log says the site answered.
const hits: [string, string, string, number?][] = [
  ["10.0.0.1", "/a", PERSON],
  ["10.0.0.1", "/b", PERSON],
  ["81.2.69.142", "/a", PERSON],
  ["81.2.69.142", "/a", PERSON],
  ["114.114.114.114", "/b?utm_source=newsletter&utm_medium=email&utm_campaign=spring", PERSON],
  ["66.249.66.1", "/a", GOOGLE],
  ["66.249.66.1", "/a", GOOGLE],
  ["66.249.66.2", "/c", GOOGLE],
  ["40.77.167.1", "/c", BING],
  ["40.77.167.1", "/a", BING],
  ["20.171.207.1", "/b", GPTBOT],
  ["8.8.8.8", "/old", PERSON, 404],
];

function logTime(d: Date): string {
  const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  const p = (n: number) => String(n).padStart(2, "0");
  return `${p(d.getUTCDate())}/${months[d.getUTCMonth()]}/${d.getUTCFullYear()}:${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:00 +0000`;
}

/** The figures for a subset of the hits, counted here, not by Bulwark. */
function count(keep: (h: [string, string, string, number?]) => boolean) {
  const rows = hits.filter(keep);
  return {
    page_views: rows.length,
    visits: new Set(rows.map(([ip, , ua]) => `${ip} ${ua}`)).size,
    unique_ips: new Set(rows.map(([ip]) => ip)).size,
    unique_pages: new Set(rows.map(([, p]) => p.split("?")[0])).size,
    human: rows.filter(([, , ua]) => ua === PERSON).length,
    bot: rows.filter(([, , ua]) => ua !== PERSON).length,
  };
}

/** Runs of a job that are queued, running or waiting to retry. */
function unfinishedRuns(job: string): number {
  const runs: { status: string }[] = JSON.parse(bulwark("runs", "list", "--job", job, "--json"));
  return runs.filter((r) => ["pending", "running", "retry_wait"].includes(r.status)).length;
}

async function expectFigures(page: Page, expected: Record<string, number>) {
  for (const [key, value] of Object.entries(expected)) {
    await expect(page.getByTestId(`fig-${key}`).locator(".value"), key).toHaveText(String(value));
  }
}

test.beforeAll(() => {
  day = daysBefore(serverToday(), 2);
  const noon = new Date(`${day}T12:00:00Z`);
  const lines = hits.map(([ip, p, ua, status], i) => {
    const at = new Date(noon.getTime() + i * 60_000);
    return `${ip} - - [${logTime(at)}] "GET ${p} HTTP/1.1" ${status ?? 200} 100 "-" "${ua}"`;
  });
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "bulwark-e2e-")), "access.log");
  fs.writeFileSync(file, lines.join("\n") + "\n");
  // Playwright runs this again in the new worker that follows a failed test: import once.
  const stored = JSON.parse(bulwark("traffic", "stats", "--from", day, "--to", day, "--json"));
  if (stored.page_views === 0) bulwark("traffic", "import", file);
});

test("the dashboard's figures match an independent count and follow range, type, category and source", async ({ page }) => {
  await signIn(page, VIEWER);
  await page.goto(`/traffic?${onDay()}`);
  await hydrated(page);
  await expectFigures(page, count(() => true));
  await expect(page.locator("#traffic-hits-chart[data-drawn=true] canvas")).toHaveCount(1);
  await expect(page.locator("#traffic-sources-chart[data-drawn=true] canvas")).toHaveCount(1);
  await expect(page.locator("#traffic-categories-chart[data-drawn=true] canvas")).toHaveCount(1);
  // Each chart says in words what it draws.
  await expect(page.getByTestId("hits-chart-text")).toContainText("page views by people");
  await expect(page.getByTestId("sources-chart-text")).toContainText(/\w+ \d+/);
  const first = page.getByTestId("top-pages").locator("tbody tr").first();
  await expect(first).toHaveAttribute("data-path", "/a");
  await expect(first).toContainText("6");
  // People's lists: every person came with no referrer, on Firefox on a Linux desktop.
  const people = count(([, , ua]) => ua === PERSON).page_views;
  await expect(page.getByTestId("people-referrers").locator('tr[data-name="(direct)"]')).toContainText(String(people));
  await expect(page.getByTestId("people-browsers").locator('tr[data-name="Firefox"]')).toContainText(String(people));
  await expect(page.getByTestId("people-devices").locator('tr[data-name="desktop"]')).toContainText(String(people));
  await expect(page.getByTestId("people-landing").locator("tr")).toHaveCount(3);
  // Countries, from the addresses: a private one is unknown; a country narrows the page.
  const countries = page.getByTestId("countries");
  await expect(countries.locator('tr[data-name="GB"]')).toContainText("2");
  await expect(countries.locator('tr[data-name="CN"]')).toContainText("1");
  await expect(countries.locator('tr[data-name="unknown"]')).toContainText("2");
  await countries.locator('tr[data-name="GB"] a').click();
  await expect(page).toHaveURL(/country=GB/);
  await expectFigures(page, count(([ip]) => ip === "81.2.69.142"));
  await expect(page.getByTestId("country-filter")).toContainText("GB");
  await page.getByTestId("country-filter").getByRole("link").click();
  await expect(page).not.toHaveURL(/country=/);
  await expectFigures(page, count(() => true));
  // The tagged landing URL is a campaign, by mail (its medium says so); every other person
  // arrived typed in (no referrer).
  const campaigns = page.getByTestId("campaigns");
  await expect(campaigns.getByTestId("channels").locator('tr[data-name="direct"]')).toContainText(String(people - 1));
  await expect(campaigns.getByTestId("channels").locator('tr[data-name="email"]')).toContainText("1");
  const spring = campaigns.getByTestId("campaign-list").locator('tr[data-name="spring"]');
  await expect(spring).toContainText("newsletter / email / spring");
  await spring.getByRole("link").click();
  await expect(page).toHaveURL(/campaign=spring/);
  await expectFigures(page, count(([, p]) => p.includes("utm_campaign=spring")));
  await expect(page.getByTestId("campaign-filter")).toContainText("spring");
  await page.getByTestId("campaign-filter").getByRole("link").click();
  await expect(page).not.toHaveURL(/campaign=/);

  // Statuses from the log, the page not found, and a status narrowing the page.
  const answers = page.getByTestId("answers");
  await expect(answers.getByTestId("statuses").locator('tr[data-name="200"]')).toContainText(String(people - 1));
  await expect(answers.getByTestId("not-found").locator('tr[data-path="/old"]')).toContainText("1");
  await expect(answers.getByTestId("not-found")).toContainText("(no referrer)");
  await answers.getByTestId("statuses").locator('tr[data-name="404"]').getByRole("link").click();
  await expect(page).toHaveURL(/status=404/);
  await expectFigures(page, count(([, , , status]) => status === 404));
  await page.getByTestId("status-filter").getByRole("link").click();
  await expect(page).not.toHaveURL(/status=/);
  await expectFigures(page, count(() => true));

  // What GPTBot fetched, and the top pages no AI crawler did.
  const ai = page.getByTestId("ai-visibility");
  await expect(ai.getByTestId("ai-crawlers").locator('details[data-name="openai"]')).toContainText("1");
  await expect(ai.getByTestId("ai-unvisited").locator("tr[data-name='/a']")).toHaveCount(1);
  await expect(ai.getByTestId("ai-unvisited").locator("tr[data-name='/b']")).toHaveCount(0);

  // Bots only: the URL says so, the figures change without a page load.
  await page.evaluate(() => ((window as any).__marker = 1));
  await page.getByTestId("type-bot").click();
  await expect(page).toHaveURL(/type=bot/);
  await expectFigures(page, count(([, , ua]) => ua !== PERSON));
  // One source.
  await page.getByTestId("sources").locator('a[data-key="google"]').click();
  await expect(page).toHaveURL(/source=google/);
  await expectFigures(page, count(([, , ua]) => ua === GOOGLE));
  expect(await page.evaluate(() => (window as any).__marker)).toBe(1);
  // Back to all bots.
  await page.goBack();
  await expectFigures(page, count(([, , ua]) => ua !== PERSON));
  // One category: the AI crawler alone, then search engines.
  await expect(page.getByTestId("categories").locator('a[data-key="ai"]')).toHaveText("AI 1");
  await page.getByTestId("categories").locator('a[data-key="ai"]').click();
  await expect(page).toHaveURL(/category=ai/);
  await expectFigures(page, count(([, , ua]) => ua === GPTBOT));
  await expect(page.getByTestId("sources").locator("a")).toHaveCount(1);
  await page.goto(`/traffic?${onDay()}&type=bot&category=search`);
  await hydrated(page);
  await expectFigures(page, count(([, , ua]) => ua === GOOGLE || ua === BING));

  // Another range: today holds none of the imported hits.
  await page.getByTestId("range-today").click();
  await expect(page).toHaveURL(/range=today/);
  await expect(page.getByTestId("traffic-range")).not.toContainText(day);
});

test("bad ranges in the URL get a clear message", async ({ page }) => {
  await signIn(page, VIEWER);
  await page.goto("/traffic?from=2026-02-30&to=2026-03-01");
  await expect(page.getByTestId("traffic-error")).toContainText("'2026-02-30' is not a date");
  await page.goto("/traffic?from=2026-11-20&to=2026-11-10");
  await expect(page.getByTestId("traffic-error")).toContainText("is after the to date");
  await page.goto("/traffic?from=2020-01-01&to=2020-01-02");
  await expect(page.getByTestId("traffic-error")).toContainText("traffic is kept 90 days");
});

test("the last hour includes hits this server has not written yet", async ({ browser, page }) => {
  // No scheduled flush may write them in the middle of the test: the job is disabled, and a
  // run of it queued or started just before is waited out.
  await signIn(page, ADMIN);
  await page.goto("/jobs");
  await hydrated(page);
  const flushJob = page.locator('tr[data-job="traffic-flush"]');
  await jobAction(flushJob, "Disable");
  await expect(flushJob.locator(".states .pill.off")).toBeVisible();
  try {
    await expect.poll(() => unfinishedRuns("traffic-flush")).toBe(0);
    await page.goto("/traffic");
    await hydrated(page);
    const live = page.getByTestId("live-total");
    await expect(live).toContainText("still in this server's memory");
    const human = async () => Number(await live.getAttribute("data-human"));
    const unflushed = async () => Number(await live.getAttribute("data-unflushed"));
    const [humanBefore, unflushedBefore] = [await human(), await unflushed()];

    const visitor = await browser.newContext({
      userAgent: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
    });
    const tab = await visitor.newPage();
    for (let i = 0; i < 3; i++) await tab.goto("/login");
    await visitor.close();

    await page.reload();
    await hydrated(page);
    await expect.poll(human).toBeGreaterThanOrEqual(humanBefore + 3);
    expect(await unflushed()).toBeGreaterThanOrEqual(unflushedBefore + 3);
    await expect(page.locator("#traffic-live-chart[data-drawn=true] canvas")).toHaveCount(1);
  } finally {
    // Enabled again even when the test failed, so the files after this one see a normal server.
    await page.goto("/jobs");
    await hydrated(page);
    await jobAction(flushJob, "Enable");
    await expect(flushJob.locator(".states .pill.ok")).toBeVisible();
  }
});

test("a top page opens its stored hits, which export as CSV", async ({ page }) => {
  await signIn(page, VIEWER);
  await page.goto(`/traffic?${onDay()}`);
  await hydrated(page);
  await page.getByTestId("top-pages").locator('tr[data-path="/c"] a').click();
  await expect(page).toHaveURL(`/traffic/hits?${onDay()}&site=127.0.0.1&path=/c`);
  const rows = page.getByTestId("hits").locator("tbody tr");
  const expected = hits.filter(([, p]) => p === "/c");
  await expect(rows).toHaveCount(expected.length);
  await expect(rows.first()).toContainText("/c");

  const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("export-csv").click()]);
  const text = fs.readFileSync((await download.path())!, "utf8");
  const lines = text.trim().split("\n");
  expect(lines[0]).toBe("minute,path,method,ip,user_agent,referer,locale,is_bot,source,count,site,country,status");
  expect(lines).toHaveLength(expected.length + 1);
  expect(lines.slice(1).every((l) => l.includes(",/c,"))).toBe(true);
});

test("an administrator registers a site, sees its snippet, and the figures split by site", async ({ page }) => {
  await signIn(page, ADMIN);
  await page.goto("/traffic/sites");
  await hydrated(page);
  await expect(page.getByTestId("sites-open")).toBeVisible();
  await page.locator("#site-host").fill("https://Shop.Example.com/cart");
  await page.getByTestId("add-site").getByRole("button", { name: "Register" }).click();
  try {
    await registeredSite(page);
  } finally {
    // A registered site closes collection to every other one: left behind by a failure, it
    // would refuse the reports of the tests after this one.
    const sites: { host: string }[] = JSON.parse(bulwark("site", "list", "--json"));
    if (sites.some((s) => s.host === "shop.example.com")) bulwark("site", "remove", "shop.example.com");
  }
});

/** The rest of the test above, from the newly registered site's card. */
async function registeredSite(page: Page) {
  const card = page.locator('section[data-site="shop.example.com"]');
  await expect(card.getByTestId("snippet")).toContainText('src="http://127.0.0.1');
  await expect(card.getByTestId("snippet")).toContainText("/collect.js");
  await expect(page.getByTestId("sites-closed")).toBeVisible();
  // A bad exclusion is refused with its reason, on this card only, and what was typed stays
  // to be corrected; a good one is shown.
  await card.locator("textarea").fill("10.0.0.0/8\nnot-an-address");
  await card.getByRole("button", { name: "Save exclusions" }).click();
  await expect(card.locator(".field-error")).toContainText("not-an-address");
  await expect(card.locator("textarea")).toHaveValue("10.0.0.0/8\nnot-an-address");
  await expect(page.locator('section[data-site="127.0.0.1"] .field-error')).toHaveText("");
  await card.locator("textarea").fill("10.0.0.0/8");
  await card.getByRole("button", { name: "Save exclusions" }).click();
  await expect(card.getByTestId("excluded")).toHaveText("10.0.0.0/8");

  await page.goto(`/traffic?${onDay()}`);
  await hydrated(page);
  await expectFigures(page, count(() => true));
  await page.getByTestId("sites").locator('a[data-site="shop.example.com"]').click();
  await expect(page).toHaveURL(/site=shop\.example\.com/);
  await expect(page.getByTestId("fig-page_views").locator(".value")).toHaveText("0");
  await page.getByTestId("sites").locator('a[data-site="127.0.0.1"]').click();
  await expectFigures(page, count(() => true));

  // Removing it opens collection to any site again.
  await page.goto("/traffic/sites");
  await hydrated(page);
  await page.locator('section[data-site="shop.example.com"]').getByRole("button", { name: /Remove this site/ }).click();
  await expect(page.getByTestId("sites-open")).toBeVisible();
  await expect(page.locator('section[data-site="shop.example.com"]')).toHaveCount(0);
}
