import { expect, Page, test } from "@playwright/test";
import { ADMIN, hydrated, signIn } from "./helpers";

async function defineDemoJob(page: Page, name: string, params: string) {
  await page.goto("/jobs/new");
  await hydrated(page);
  await page.locator("#job-name").fill(name);
  await page.locator("#job-kind").selectOption("builtin");
  await page.locator("#job-builtin_params").fill(params);
  await page.locator("#job-cron").fill("0 0 0 1 1 *");
  await page.locator("#retry-first").fill("200ms");
  await page.locator("#retry-multiplier").fill("2");
  await page.locator("#retry-max").fill("2");
  await page.locator("#retry-jitter").selectOption("none");
  await page.locator("#retry-cap").fill("");
  await page.getByRole("button", { name: "Save job" }).click();
  await expect(page).toHaveURL(/\/jobs\/\d+\?saved=1$/);
}

test("Run now starts a run the engine executes, followed live until it ends", async ({ page }) => {
  await signIn(page, ADMIN);
  await defineDemoJob(page, "always-fails", "failure_rate=1\nsleep=50ms");
  await defineDemoJob(page, "always-works", "failure_rate=0\nsleep=50ms");

  await page.goto("/jobs");
  await hydrated(page);
  await page.locator('tr[data-job="always-fails"]').getByRole("button", { name: "Run now" }).click();
  await expect(page).toHaveURL(/\/runs\/\d+$/);
  await page.evaluate(() => ((window as any).__bulwarkMarker = 1));
  // The page follows the run without a reload: first try plus two retries, then dead.
  await expect(page.getByTestId("run-status").locator("[data-status]")).toHaveAttribute("data-status", "dead", {
    timeout: 30_000,
  });
  const attempts = page.getByTestId("attempts").locator("tbody tr");
  await expect(attempts).toHaveCount(3);
  await expect(attempts.first()).toContainText("demo failure");
  await expect(attempts.first()).toContainText("transient");
  expect(await page.evaluate(() => (window as any).__bulwarkMarker)).toBe(1);

  await page.goto("/jobs");
  await hydrated(page);
  await page.locator('tr[data-job="always-works"]').getByRole("button", { name: "Run now" }).click();
  await expect(page.getByTestId("run-status").locator("[data-status]")).toHaveAttribute("data-status", "succeeded", {
    timeout: 30_000,
  });

  await page.goto("/runs?status=dead&job=always-fails");
  await hydrated(page);
  const rows = page.getByTestId("runs").locator("tbody tr");
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText("always-fails");
  await page.locator("#f-job").fill("always-works");
  await page.locator("#f-status").selectOption("succeeded");
  await page.getByRole("button", { name: "Filter" }).click();
  await expect(page).toHaveURL(/status=succeeded/);
  await expect(page.getByTestId("runs").locator("tbody tr").first()).toContainText("always-works");
});
