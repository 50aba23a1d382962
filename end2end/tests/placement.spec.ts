import { expect, test } from "@playwright/test";
import { ADMIN, defineJob, hydrated, runNow, signIn } from "./helpers";

// Where a job runs: the editor says which live nodes carry the labels typed into "Run on", a
// run no live node may take waits for a node on its page and the Overview, and it runs once
// the job asks for nothing this instance lacks. A pool must exist. Settings says what the
// instance runs.

test("a job asking for labels no node carries waits for a node, then runs", async ({ page }) => {
  test.setTimeout(90_000);
  await signIn(page, ADMIN);
  const jobPage = await defineJob(page, "placed-db", { params: "failure_rate=0\nsleep=1ms" });
  await page.goto(jobPage);
  await hydrated(page);
  await expect(page.getByTestId("run-on-nodes")).toContainText("1 of 1 live node may run it now");
  // A pool no jobs file defined is refused beside its field, and nothing is saved.
  await page.locator("#job-pool").fill("nope");
  await page.getByRole("button", { name: "Save job" }).click();
  await expect(page.getByTestId("save-error")).toContainText("pool");
  await expect(page.locator('.field-error[data-field="pool"]')).toContainText('there is no pool named "nope"');
  await page.locator("#job-pool").fill("");
  const runOn = page.locator("#job-run_on");
  await runOn.fill("role=db");
  await expect(page.getByTestId("run-on-none")).toContainText("No live node may run it now (1 live)");
  await page.getByRole("button", { name: "Save job" }).click();
  await expect(page.getByTestId("save-ok")).toHaveText("Saved.");

  // The placement sweep marks it within a heartbeat.
  const runPage = await runNow(page, "placed-db", "waiting_for_node");
  await page.goto("/");
  await hydrated(page);
  const waiting = page.getByTestId("waiting-for-node").locator('li[data-job="placed-db"]');
  await expect(waiting).toContainText("no live instance may run it: it asks for role=db");

  await page.goto(jobPage);
  await hydrated(page);
  await runOn.fill("");
  await page.getByRole("button", { name: "Save job" }).click();
  await expect(page.getByTestId("save-ok")).toHaveText("Saved.");
  await page.goto(runPage);
  await expect(page.getByTestId("run-status").locator("[data-status]")).toHaveAttribute("data-status", "succeeded", {
    timeout: 30_000,
  });

  await page.goto("/settings");
  await hydrated(page);
  const live = page.getByTestId("nodes").locator('tr[data-state="live"]');
  await expect(live.getByTestId("node-runs")).toHaveText("console and jobs · no labels");
});

test("a tick in shards lists its children, and each child names its parent", async ({ page }) => {
  test.setTimeout(90_000);
  await signIn(page, ADMIN);
  const jobPage = await defineJob(page, "in-shards", { params: "failure_rate=0\nsleep=1ms" });
  await page.goto(jobPage);
  await hydrated(page);
  // Both ways of spreading at once are refused beside the field.
  await page.locator("#job-run_on_count").fill("all");
  await page.locator("#job-shards").fill("2");
  await page.getByRole("button", { name: "Save job" }).click();
  await expect(page.locator('.field-error[data-field="shards"]')).toContainText("not both");
  await page.locator("#job-run_on_count").fill("");
  await page.getByRole("button", { name: "Save job" }).click();
  await expect(page.getByTestId("save-ok")).toHaveText("Saved.");

  const parentPage = await runNow(page, "in-shards", "succeeded");
  await expect(page.getByTestId("children-summary")).toHaveText("All 2 succeeded");
  const children = page.getByTestId("child-run");
  await expect(children).toHaveCount(2);
  await expect(children.nth(1)).toContainText("1 / 2");
  await children.nth(1).getByRole("link").click();
  await expect(page.getByTestId("run-shard")).toContainText("1 of 2, part of");
  await page.getByTestId("run-shard").getByRole("link").click();
  await expect(page).toHaveURL(parentPage);
});
