import { expect, test } from "@playwright/test";
import { ADMIN, defineJob, hydrated, runNow, signIn, VIEWER } from "./helpers";

test("a running command's output shows on its run page before it ends, and stays after", async ({ browser, page }) => {
  await signIn(page, ADMIN);
  await defineJob(page, "live-talker", {
    program: "sh",
    args: "-c\necho live-first-line; echo live-on-stderr >&2; sleep 6; echo live-last-line",
  });
  await runNow(page, "live-talker");
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
