import path from "node:path";
import { expect, test } from "@playwright/test";
import { ADMIN, hydrated, signIn } from "../tests/helpers";

// The Overview after the demo jobs have run for a while, at desktop and phone sizes.
test("the Overview, for the README", async ({ page }) => {
  await signIn(page, ADMIN);
  // A few runs by hand besides the demo's cron ticks, so the tiles and lists have something in
  // them: the broken job ends dead, the flaky one retries.
  for (const job of ["demo-broken", "demo-flaky", "demo-steady", "demo-broken", "demo-flaky"]) {
    await page.goto(`/jobs?q=${job}`);
    await hydrated(page);
    await page.locator(`tr[data-job="${job}"]`).getByRole("button", { name: "Run now" }).click();
    await expect(page).toHaveURL(/\/runs\/\d+$/);
  }
  await page.waitForTimeout(60_000);
  for (const [name, width, height] of [
    ["overview-desktop", 1280, 900],
    ["overview-phone", 390, 844],
  ] as const) {
    await page.setViewportSize({ width, height });
    await page.goto("/");
    await hydrated(page);
    await expect(page.getByTestId("tile-runs")).toBeVisible();
    await page.waitForTimeout(1_500);
    await page.screenshot({ path: path.join(__dirname, "..", "..", "docs", "screenshots", `${name}.png`), fullPage: name.endsWith("phone") });
  }
  // The same in Chinese, chosen from the header's menu.
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.getByTestId("language-switcher").selectOption("zh-CN");
  await expect(page.locator("html")).toHaveAttribute("lang", "zh-CN");
  await hydrated(page);
  await expect(page.getByTestId("tile-runs")).toBeVisible();
  await page.waitForTimeout(1_500);
  await page.screenshot({ path: path.join(__dirname, "..", "..", "docs", "screenshots", "overview-zh-CN.png") });
});
