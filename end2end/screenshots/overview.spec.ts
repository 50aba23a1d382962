import path from "node:path";
import { expect, test } from "@playwright/test";
import { ADMIN, hydrated, signIn } from "../tests/helpers";

// The Overview after the demo jobs have run for a while, at desktop and phone sizes.
test("the Overview, for the README", async ({ page }) => {
  await signIn(page, ADMIN);
  // Let the demo's every-few-seconds jobs run, fail and retry for a while.
  await page.waitForTimeout(90_000);
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
});
