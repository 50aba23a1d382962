import { expect, test } from "@playwright/test";
import { ADMIN, hydrated, signIn, VIEWER } from "./helpers";

test("a watched job is defined in the editor, shows its ping URL to admins only, and a ping becomes a timed run with its output", async ({
  browser,
  page,
}) => {
  test.setTimeout(90_000);
  await signIn(page, ADMIN);
  await page.goto("/jobs/new");
  await hydrated(page);
  await page.locator("#job-name").fill("offsite-backup");
  await page.locator("#job-kind").selectOption("watch");
  // A tick every minute with half a minute's grace: a ping at any moment fits one tick's window.
  await page.locator("#job-cron").fill("0 * * * * *");
  await page.locator("#job-watch_grace").fill("30s");
  await page.locator("#job-watch_min_duration").fill("100ms");
  await expect(page.getByText("Retry policy")).toBeHidden();
  await page.getByRole("button", { name: "Save job" }).click();
  await expect(page).toHaveURL(/\/jobs\/\d+\?saved=1$/);
  const jobUrl = page.url().replace("?saved=1", "");

  const card = page.getByTestId("ping-url");
  const url = (await card.getByTestId("ping-url-value").textContent())!.trim();
  expect(url).toMatch(/\/ping\/[0-9a-f]{32}$/);
  await expect(card.locator("pre.snippet")).toContainText(`bulwark exec --ping-url ${url} --`);

  // The job reports as a host would: start, a little work, then success with its output.
  const path = new URL(url).pathname;
  const started = await page.request.get(`${path}/start?rid=e2e`);
  expect(started.status()).toBe(200);
  expect((await started.json()).status).toBe("running");
  await page.waitForTimeout(1_200);
  const done = await page.request.post(`${path}?rid=e2e`, { data: "copied 42 files\n" });
  expect(done.status()).toBe(200);
  const answer = await done.json();
  expect(answer.status).toBe("succeeded");

  // Its run: succeeded, about a second long, the body as its output.
  await page.goto(`/runs/${answer.run_id}`);
  await hydrated(page);
  await expect(page.getByTestId("run-status").locator("[data-status]")).toHaveAttribute("data-status", "succeeded");
  await expect(page.getByTestId("log-lines")).toContainText("copied 42 files");

  // The job page draws its durations; the Jobs list marks it as watched.
  await page.goto(jobUrl);
  await hydrated(page);
  await expect(page.getByTestId("durations-band")).toContainText("One run so far");
  await expect(page.locator("#duration-chart canvas")).toHaveCount(1);
  // On a phone the page keeps to its width: the long URL breaks, the chart fits.
  await page.setViewportSize({ width: 390, height: 800 });
  await page.reload();
  await hydrated(page);
  await expect(page.locator("#duration-chart canvas")).toHaveCount(1);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.goto("/jobs?q=offsite-backup");
  await hydrated(page);
  await expect(page.locator('tr[data-job="offsite-backup"]')).toContainText("watched");

  // A viewer sees the job and its durations, never its ping URL.
  const context = await browser.newContext();
  const viewer = await context.newPage();
  await signIn(viewer, VIEWER);
  await viewer.goto(jobUrl);
  await hydrated(viewer);
  await expect(viewer.getByTestId("durations")).toBeVisible();
  await expect(viewer.getByTestId("ping-url")).toHaveCount(0);
  expect(await viewer.content()).not.toContain(path);
  await context.close();

  // A new URL: the old one stops working at once.
  await page.goto(jobUrl);
  await hydrated(page);
  await page.getByRole("button", { name: "Make a new URL" }).click();
  await expect(page.getByText("A new ping URL is in use.")).toBeVisible();
  await expect(page.getByTestId("ping-url-value")).not.toHaveText(url);
  expect((await page.request.get(path)).status()).toBe(404);
});
