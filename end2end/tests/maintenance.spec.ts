import { expect, Page, test } from "@playwright/test";
import { ADMIN, defineJob, hydrated, jobAction, runNow, signIn } from "./helpers";

async function runsOf(page: Page, name: string): Promise<number> {
  await page.goto(`/runs?job=${name}`);
  await hydrated(page);
  await expect(page.getByRole("heading", { name: "Runs" })).toBeVisible();
  return page.getByTestId("runs").locator("tbody tr").count();
}

test("a job's strip and success rate match its runs; the list filters, sorts, tags and pauses in bulk", async ({
  page,
}) => {
  await signIn(page, ADMIN);
  const jobUrl = await defineJob(page, "scan-mixed", {
    params: "failure_rate=0\nsleep=20ms",
    cron: "0 0 0 1 1 *",
    tags: "Scan, team-a",
  });
  await runNow(page, "scan-mixed", "succeeded");
  await runNow(page, "scan-mixed", "succeeded");
  await page.goto(jobUrl);
  await hydrated(page);
  await page.locator("#job-builtin_params").fill("failure_rate=1\nsleep=20ms");
  await page.getByRole("button", { name: "Save job" }).click();
  await expect(page.getByTestId("save-ok")).toHaveText("Saved.");
  await runNow(page, "scan-mixed", "dead");

  await page.goto("/jobs?q=scan-mixed");
  await hydrated(page);
  const row = page.locator('tr[data-job="scan-mixed"]');
  await expect(row.getByTestId("strip").locator(".sq")).toHaveCount(3);
  await expect(row.getByTestId("strip").locator(".sq.succeeded")).toHaveCount(2);
  await expect(row.getByTestId("strip").locator(".sq.dead")).toHaveCount(1);
  await expect(row.getByTestId("strip")).toHaveAttribute("aria-label", "last 3 runs: 2 succeeded, 1 dead, 0 other");
  await expect(row.getByTestId("rate")).toHaveText("66.7%");
  await expect(row.getByTestId("last").locator("[data-status]")).toHaveAttribute("data-status", "dead");
  await expect(row.getByTestId("p95")).not.toHaveText("—");

  // Tags are folded to lower case; a tag opens the list of its jobs.
  await row.locator('a.tag[data-tag="scan"]').click();
  await expect(page).toHaveURL(/\/jobs\?tag=scan$/);
  await hydrated(page);
  await expect(page.getByTestId("jobs").locator("tbody tr")).toHaveCount(1);
  await expect(page.getByTestId("jobs-filter")).toContainText("1 of ");

  // Sorting by success rate, worst first, keeps the filter.
  await page.getByRole("link", { name: "7-day success" }).click();
  await expect(page).toHaveURL(/\/jobs\?tag=scan&sort=rate$/);

  // Several at once: tag and pause.
  await hydrated(page);
  await row.getByRole("checkbox").check();
  await expect(page.getByTestId("bulk")).toContainText("1 selected");
  await page.locator("#bulk-tag").fill("billing");
  await page.getByTestId("bulk").getByRole("button", { name: "Add tag" }).click();
  await expect(row.locator('a.tag[data-tag="billing"]')).toBeVisible();
  await row.getByRole("checkbox").check();
  await page.getByTestId("bulk").getByRole("button", { name: "Pause" }).click();
  await expect(row.getByTestId("paused")).toBeVisible();
  await page.goto("/jobs?state=paused");
  await hydrated(page);
  await expect(page.locator('tr[data-job="scan-mixed"]')).toBeVisible();
  await jobAction(page.locator('tr[data-job="scan-mixed"]'), "Resume");
  await expect(page.locator('tr[data-job="scan-mixed"]').getByTestId("paused")).toHaveCount(0);
});

test("pause all stops new cron runs, shows who and why on every page, asks before Run now; resume starts them again", async ({
  page,
}) => {
  await signIn(page, ADMIN);
  await defineJob(page, "maint-ticker", { params: "failure_rate=0", cron: "* * * * * *" });
  // It ticks every second.
  await expect.poll(() => runsOf(page, "maint-ticker"), { timeout: 20_000 }).toBeGreaterThan(1);

  await page.goto("/maintenance");
  await hydrated(page);
  await expect(page.getByTestId("not-paused")).toBeVisible();
  await page.locator("#pause-reason").fill("e2e database upgrade");
  // A time it cannot read is refused beside the field, and the reason stays typed.
  await page.locator("#pause-until").fill("after lunch");
  await page.getByTestId("pause-all").getByRole("button", { name: "Pause all" }).click();
  await expect(page.getByTestId("pause-all").locator(".field-error").nth(1)).toContainText("after lunch");
  await expect(page.locator("#pause-reason")).toHaveValue("e2e database upgrade");
  await expect(page.getByTestId("not-paused")).toBeVisible();
  await page.locator("#pause-until").fill("2h");
  await page.getByTestId("pause-all").getByRole("button", { name: "Pause all" }).click();
  const banner = page.getByTestId("maintenance-banner");
  await expect(banner).toContainText("Bulwark is paused by admin");
  await expect(banner).toContainText("e2e database upgrade");

  // No new cron run while paused (one claimed just before the pause may still finish).
  await page.waitForTimeout(1_500);
  const paused = await runsOf(page, "maint-ticker");
  await expect(page.getByTestId("maintenance-banner")).toContainText("e2e database upgrade");
  await page.waitForTimeout(3_000);
  expect(await runsOf(page, "maint-ticker")).toBe(paused);

  // Run now still works, after saying Bulwark is paused.
  await page.goto("/jobs?q=maint-ticker");
  await hydrated(page);
  let asked = "";
  page.once("dialog", (dialog) => {
    asked = dialog.message();
    void dialog.accept();
  });
  await page.locator('tr[data-job="maint-ticker"]').getByRole("button", { name: "Run now" }).click();
  await expect(page).toHaveURL(/\/runs\/\d+$/);
  expect(asked).toContain("Bulwark is paused (e2e database upgrade, by admin)");
  await expect(page.getByTestId("run-status").locator("[data-status]")).toHaveAttribute("data-status", "succeeded", {
    timeout: 30_000,
  });

  await page.goto("/maintenance");
  await hydrated(page);
  await page.getByTestId("resume").click();
  await expect(page.getByTestId("not-paused")).toBeVisible();
  await expect(page.getByTestId("maintenance-banner")).toHaveCount(0);
  const resumed = await runsOf(page, "maint-ticker");
  await expect.poll(() => runsOf(page, "maint-ticker"), { timeout: 20_000 }).toBeGreaterThan(resumed);

  // Stop it ticking for the tests after this one.
  await page.goto("/jobs?q=maint-ticker");
  await hydrated(page);
  await jobAction(page.locator('tr[data-job="maint-ticker"]'), "Disable");
  await expect(page.locator('tr[data-job="maint-ticker"] .states .pill.off')).toBeVisible();
});
