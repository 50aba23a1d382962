import { expect, Page, test } from "@playwright/test";
import { ADMIN, defineJob, hydrated, runNow, signIn, VIEWER } from "./helpers";

async function tileValue(page: Page, key: string): Promise<number> {
  const text = (await page.getByTestId(`tile-${key}`).locator(".value").innerText()).trim();
  return Number.parseInt(text, 10);
}

async function saveFailureRate(page: Page, jobUrl: string, rate: string) {
  await page.goto(jobUrl);
  await hydrated(page);
  await page.locator("#job-builtin_params").fill(`failure_rate=${rate}\nsleep=20ms`);
  await page.getByRole("button", { name: "Save job" }).click();
  await expect(page.getByTestId("save-ok")).toHaveText("Saved.");
}

test("the Overview's tiles land on lists with the same counts; a dead run is re-triggered from Needs attention", async ({
  page,
}) => {
  await signIn(page, ADMIN);
  const jobUrl = await defineJob(page, "overview-flaky", { params: "failure_rate=1\nsleep=20ms" });
  await runNow(page, "overview-flaky", "dead");

  await page.goto("/");
  await hydrated(page);
  const attention = page.getByTestId("attention").locator('tr[data-job="overview-flaky"]');
  await expect(attention).toContainText("dead");
  await expect(page.getByTestId("last-failures")).toContainText("overview-flaky");

  // The failed-queue tile and the queue it links to agree.
  const queued = await tileValue(page, "failed");
  expect(queued).toBeGreaterThanOrEqual(1);
  await page.getByTestId("tile-failed").click();
  await expect(page).toHaveURL(/\/failed$/);
  await hydrated(page);
  await expect(page.getByTestId("queue").locator("tbody tr")).toHaveCount(queued);

  // So do the failing-jobs tile and the Jobs page it opens.
  await page.goto("/");
  await hydrated(page);
  const failing = await tileValue(page, "failing");
  await page.getByTestId("tile-failing").click();
  await expect(page).toHaveURL(/\/jobs\?state=failing$/);
  await hydrated(page);
  await expect(page.getByTestId("jobs-filter")).toContainText(`${failing} of `);
  await expect(page.getByTestId("jobs").locator("tbody tr")).toHaveCount(failing);

  // Fixed, re-triggered from the Overview: the job leaves Needs attention by itself.
  await saveFailureRate(page, jobUrl, "0");
  await page.goto("/");
  await hydrated(page);
  await attention.getByRole("button", { name: "Re-trigger" }).click();
  await expect(attention).toHaveCount(0, { timeout: 30_000 });
});

test("a viewer reads the Overview without actions, and it fits a phone", async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await signIn(page, VIEWER);
  await page.goto("/");
  await hydrated(page);
  await expect(page.getByTestId("tile-runs")).toBeVisible();
  await expect(page.getByTestId("attention").getByRole("button", { name: "Re-trigger" })).toHaveCount(0);
  // Nothing wider than the screen: tables scroll inside their cards.
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
});
