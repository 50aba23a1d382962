import { expect, Page, test } from "@playwright/test";
import { ADMIN, VIEWER, defineJob, hydrated, runNow, signIn } from "./helpers";

async function setFailureRate(page: Page, jobUrl: string, rate: string) {
  await page.goto(jobUrl);
  await hydrated(page);
  await page.locator("#job-builtin_params").fill(`failure_rate=${rate}\nsleep=20ms`);
  await page.getByRole("button", { name: "Save job" }).click();
  await expect(page.getByTestId("save-ok")).toHaveText("Saved.");
}

test("a failing job lands in the queue; re-triggered after the fix it turns green; bulk by filter", async ({ page }) => {
  await signIn(page, ADMIN);
  const jobUrl = await defineJob(page, "flaky-mailer", { params: "failure_rate=1\nsleep=20ms" });

  const deadRunUrl = await runNow(page, "flaky-mailer", "dead");
  await page.goto("/failed");
  await hydrated(page);
  const row = page.locator('tr[data-job="flaky-mailer"]');
  await expect(row).toHaveCount(1);
  await expect(row).toContainText("demo failure");
  await expect(page.getByTestId("queue-counts")).toContainText("flaky-mailer 1");

  // Fix the job, then re-trigger the dead run from its page and watch the new run succeed.
  await setFailureRate(page, jobUrl, "0");
  await page.goto(deadRunUrl);
  await hydrated(page);
  await page.getByTestId("retrigger-panel").getByRole("button", { name: "Re-trigger now" }).click();
  await expect(page).not.toHaveURL(deadRunUrl);
  await expect(page.getByTestId("run-status").locator("[data-status]")).toHaveAttribute("data-status", "succeeded", {
    timeout: 30_000,
  });
  await page.goto(deadRunUrl);
  await expect(page.getByTestId("resolution")).toContainText("retriggered by admin");
  await expect(page.getByTestId("run-audit")).toContainText("run.retriggered");

  // Two more failures, then re-trigger everything matching the filter, with a preview.
  await setFailureRate(page, jobUrl, "1");
  await runNow(page, "flaky-mailer", "dead");
  await runNow(page, "flaky-mailer", "dead");
  await setFailureRate(page, jobUrl, "0");
  await page.goto("/failed?job=flaky-mailer");
  await hydrated(page);
  await expect(page.getByTestId("matching")).toHaveText("2");
  await page.getByRole("button", { name: "Re-trigger all matching…" }).click();
  await expect(page.getByTestId("bulk-confirm")).toContainText("Re-trigger all 2 runs matching this filter, 60 per minute?");
  await page.getByRole("button", { name: "Yes, re-trigger" }).click();
  await expect(page.getByTestId("queue-outcome")).toContainText("2 runs re-triggered.");
  await expect(page.getByTestId("queue-empty")).toBeVisible();
});

test("a viewer sees the queue without actions, and a forged re-trigger is refused", async ({ page }) => {
  await signIn(page, VIEWER);
  await page.goto("/failed");
  await hydrated(page);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Failed queue");
  await expect(page.getByTestId("bulk")).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Re-trigger" })).toHaveCount(0);
  const status = await page.evaluate(async () => {
    const res = await fetch("/api/failed/retrigger", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: 1, timeout: null, retry: null }),
    });
    return res.status;
  });
  expect(status).toBe(403);
});
