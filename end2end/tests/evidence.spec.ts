import { expect, test } from "@playwright/test";
import { ADMIN, defineJob, hydrated, runNow, signIn } from "./helpers";

// The retry editor's evidence: a job whose every run fails once (exit 75, transient) and
// succeeds when retried builds a history of ten recovered outages; the editor replays the
// policies against it and suggests one, which "Apply" puts into the fields. After a change, the
// panel can keep to the runs of the current revision.

test("the editor replays policies against the job's own failures and applies a suggestion", async ({ page }) => {
  test.setTimeout(180_000);
  await signIn(page, ADMIN);
  const counter = `/tmp/bulwark-e2e-evidence-${Date.now()}`;
  const jobUrl = await defineJob(page, "evidence-flaky", {
    program: "sh",
    // Odd calls fail with 75 (transient), even ones succeed: each run fails once, then recovers.
    args: `-c\nn=$(cat ${counter} 2>/dev/null || echo 0); echo $((n+1)) > ${counter}; [ $((n % 2)) -eq 1 ] || exit 75`,
  });

  // A new job has no history yet: the panel says so and the guessed rate stays.
  await page.goto(jobUrl);
  await hydrated(page);
  await expect(page.getByTestId("evidence-few")).toBeVisible();

  for (let i = 0; i < 10; i++) {
    await runNow(page, "evidence-flaky", "succeeded");
  }

  await page.goto(jobUrl);
  await hydrated(page);
  const panel = page.getByTestId("retry-evidence");
  await expect(panel).toContainText("10 failure episodes");
  // With ten episodes the recovery fact is the replay's, not the guessed rate; the policy in
  // force is replayed beside the edited one (the same until a field changes).
  await expect(page.locator("dt", { hasText: "Of this job's past outages" })).toBeVisible();
  const inForce = await panel.getByTestId("evidence-in-force").textContent();
  await expect(panel.getByTestId("evidence-edited")).toHaveText(inForce!);
  // The chart draws the recovery on its second axis.
  const series = await page.evaluate(() => {
    const chart = (window as any).echarts.getInstanceByDom(document.getElementById("retry-chart"));
    return chart.getOption().series.map((s: any) => s.name);
  });
  expect(series).toContain("Past outages recovered");

  // A change makes revision 2; its two runs are all the evidence of the job as it is now.
  await page.locator("#job-description").fill("revised");
  await page.getByRole("button", { name: "Save job" }).click();
  await expect(page.getByTestId("save-ok")).toHaveText("Saved.");
  for (let i = 0; i < 2; i++) {
    await runNow(page, "evidence-flaky", "succeeded");
  }
  await page.goto(jobUrl);
  await hydrated(page);
  await expect(panel).toContainText("12 failure episodes");
  const currentOnly = panel.getByTestId("evidence-current-only");
  await currentOnly.check();
  await expect(panel.getByTestId("evidence-few")).toHaveText(/Revision 2 has only 2 failure episodes/);
  await expect(page.locator("dt", { hasText: "Of this job's past outages" })).toHaveCount(0);
  await currentOnly.uncheck();
  await expect(panel).toContainText("12 failure episodes");

  // A policy too hasty for these outages: its single retry comes before any has ended.
  await page.locator("#retry-first").fill("1ms");
  await expect(panel.locator("tr[data-retry='1'] [data-testid=evidence-recovered]")).toHaveText("0 %");

  await page.getByTestId("evidence-suggest").click();
  const suggestion = page.getByTestId("evidence-suggestion");
  await expect(suggestion).toContainText("Suggested");
  const proposed = await suggestion.locator("table.diff tr").evaluateAll((rows) =>
    rows.map((r) => [r.querySelector("th")!.textContent, r.querySelector("ins")!.textContent]),
  );
  expect(proposed.length).toBeGreaterThan(0);
  await page.getByTestId("evidence-apply").click();
  const fields: Record<string, string> = {
    "First interval F": "#retry-first",
    "Multiplier M": "#retry-multiplier",
    "Max retries C": "#retry-max",
  };
  for (const [label, value] of proposed) {
    await expect(page.locator(fields[label!])).toHaveValue(value!);
  }
  // The suggestion recovers the target share of these outages.
  await expect(page.getByTestId("recovery")).toHaveText("100 %");
});
