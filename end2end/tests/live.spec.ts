import { expect, test } from "@playwright/test";
import { ADMIN, hydrated, signIn, VIEWER } from "./helpers";

test("a running command's output shows on its run page before it ends, and stays after", async ({ browser, page }) => {
  await signIn(page, ADMIN);
  await page.goto("/jobs/new");
  await hydrated(page);
  await page.locator("#job-name").fill("live-talker");
  await page.locator("#job-kind").selectOption("command");
  await page.locator("#job-command_program").fill("sh");
  await page.locator("#job-command_args").fill("-c\necho live-first-line; echo live-on-stderr >&2; sleep 6; echo live-last-line");
  await page.locator("#job-cron").fill("0 0 0 1 1 *");
  await page.getByRole("button", { name: "Save job" }).click();
  await expect(page).toHaveURL(/\/jobs\/\d+\?saved=1$/);

  await page.goto("/jobs?q=live-talker");
  await hydrated(page);
  await page.locator('tr[data-job="live-talker"]').getByRole("button", { name: "Run now" }).click();
  await expect(page).toHaveURL(/\/runs\/\d+$/);
  const runUrl = page.url();

  // A viewer, in another session, watches the same run.
  const viewerContext = await browser.newContext();
  const viewer = await viewerContext.newPage();
  await signIn(viewer, VIEWER);
  await viewer.goto(runUrl);
  await hydrated(viewer);

  for (const watcher of [page, viewer]) {
    const live = watcher.getByTestId("live-output");
    await expect(live).toContainText("live-first-line", { timeout: 10_000 });
    await expect(live).toContainText("live-on-stderr");
    await expect(live).not.toContainText("live-last-line");
    await expect(watcher.getByTestId("run-status").locator("[data-status]")).toHaveAttribute("data-status", "running");
  }

  await expect(page.getByTestId("run-status").locator("[data-status]")).toHaveAttribute("data-status", "succeeded", {
    timeout: 20_000,
  });
  await expect(page.getByTestId("live-output")).toHaveCount(0);
  await page.locator("details", { hasText: "output" }).locator("summary").first().click();
  await expect(page.locator("pre.tail").first()).toContainText("live-first-line");
  await expect(page.locator("pre.tail").first()).toContainText("live-last-line");
  await viewerContext.close();
});
