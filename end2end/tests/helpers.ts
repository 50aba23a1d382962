import { expect, Page } from "@playwright/test";

export const ADMIN = { username: "admin", password: "admin-e2e-password" };
export const VIEWER = { username: "viewer", password: "viewer-e2e-password" };

/** Waits until the wasm bundle has hydrated the page (the app marks <html data-hydrated>). */
export async function hydrated(page: Page) {
  await expect(page.locator("html[data-hydrated=true]")).toHaveCount(1, { timeout: 30_000 });
}

export async function signIn(page: Page, who: { username: string; password: string }) {
  await page.goto("/login");
  await hydrated(page);
  await page.getByLabel("Username").fill(who.username);
  await page.getByLabel("Password").fill(who.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("current-user")).toHaveText(who.username);
}
