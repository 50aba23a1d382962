import { createHmac } from "node:crypto";
import { expect, test } from "@playwright/test";
import { ADMIN, hydrated, signIn } from "./helpers";

// Company sign-in through the OpenID provider's own pages (end2end/oidc/provider.mjs, started
// by start-server.sh), and a second factor set up and used the way a person does it.

test("a person signs in through the company's provider and out of both", async ({ page }) => {
  await page.goto("/login");
  await hydrated(page);
  await page.getByRole("link", { name: "Sign in with Example SSO" }).click();
  await expect(page).toHaveTitle("Test provider: sign in");
  await page.getByLabel("Name").fill("alice");
  await page.getByLabel("Password").fill("provider-password");
  await page.getByRole("button", { name: "Continue" }).click();
  await expect(page.getByTestId("current-user")).toHaveText("alice");

  // She is in ops: an administrator, shown on Settings → Users as the provider's.
  await page.goto("/settings");
  const row = page.getByTestId("users").locator("tr", { hasText: "alice" });
  await expect(row.locator("td[data-sign-in='oidc:oidc']")).toHaveText("oidc");
  await expect(page.getByTestId("manage-alice")).toBeVisible();

  // Signing out ends the provider's session too, after it asks.
  await hydrated(page);
  await page.locator(".who").getByRole("button", { name: "Sign out" }).click();
  await page.locator("button[value=yes]").click();
  await expect(page).toHaveURL(/\/login$/);
  await page.getByRole("link", { name: "Sign in with Example SSO" }).click();
  await expect(page).toHaveTitle("Test provider: sign in");
});

/** The code an authenticator app with the base32 `secret` shows now (RFC 6238: SHA-1, 30 s,
 * six digits), written out here so the test does not trust the server's own library. */
function totp(secret: string, at = Date.now()): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = "";
  for (const c of secret.replace(/=+$/, "")) bits += alphabet.indexOf(c).toString(2).padStart(5, "0");
  const key = Buffer.from(bits.match(/.{8}/g)!.map((b) => parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(at / 1000 / 30)));
  const mac = createHmac("sha1", key).update(counter).digest();
  const offset = mac[mac.length - 1] & 0xf;
  const number = (mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000;
  return number.toString().padStart(6, "0");
}

test("a second factor is set up on the Account page and asked for at sign-in", async ({ page }) => {
  const person = { username: "totp-person", password: "totp-person-password" };
  await signIn(page, ADMIN);
  await page.goto("/settings");
  await hydrated(page);
  const add = page.getByTestId("add-user");
  await add.getByLabel("Username").fill(person.username);
  await add.getByLabel("Password").fill(person.password);
  await add.getByRole("button", { name: "Add user" }).click();
  await expect(page.getByTestId("users")).toContainText(person.username);
  await page.locator(".who").getByRole("button", { name: "Sign out" }).click();

  await signIn(page, person);
  await page.goto("/account");
  await hydrated(page);
  const card = page.getByTestId("second-factor");
  await card.getByRole("button", { name: "Set up an authenticator app" }).click();
  await expect(card.getByTestId("second-factor-qr").locator("svg")).toBeVisible();
  const secret = (await card.getByTestId("second-factor-secret").textContent())!.trim();
  await card.getByLabel("The code it shows").fill(totp(secret));
  await card.getByRole("button", { name: "Turn on" }).click();
  await expect(card.getByTestId("recovery-codes").locator("li")).toHaveCount(10);
  const recovery = (await card.getByTestId("recovery-codes").locator("li").first().textContent())!.trim();
  await expect(card.getByTestId("second-factor-on")).toBeVisible();
  await page.locator(".who").getByRole("button", { name: "Sign out" }).click();

  // The password alone asks for the code; a recovery code stands in for it once.
  await page.goto("/login");
  await hydrated(page);
  await page.getByLabel("Username").fill(person.username);
  await page.getByLabel("Password").fill(person.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("code-error")).toBeVisible();
  await page.getByLabel("Code from your authenticator app").fill(recovery);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("current-user")).toHaveText(person.username);
});
