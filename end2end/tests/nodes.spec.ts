import { expect, test } from "@playwright/test";
import { hydrated, signIn, VIEWER } from "./helpers";

test("Settings lists the running node with its heartbeat and clock", async ({ page }) => {
  await signIn(page, VIEWER);
  await page.goto("/settings");
  await hydrated(page);
  const live = page.getByTestId("nodes").locator('tr[data-state="live"]');
  await expect(live).toHaveCount(1);
  await expect(live).toContainText(/\d+ s ago/);
  // The clock column shows the offset from the database's clock (same machine: near zero).
  await expect(live).toContainText(/[+-]0\.\d s/);
});
