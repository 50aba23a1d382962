import { expect, test } from "@playwright/test";
import { ADMIN, hydrated, signIn } from "./helpers";

// An on-call engineer's phone: the account pages must work at this size.
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };

test("a reset password is changed on a phone before anything else; an admin then disables the account", async ({ page, browser }) => {
  await signIn(page, ADMIN);
  await page.goto("/settings");
  await hydrated(page);
  const add = page.getByTestId("add-user");
  await add.getByLabel("Username").fill("rotator");
  await add.getByLabel("Password").fill("rotator-first-password");
  await add.getByRole("button", { name: "Add user" }).click();
  await expect(page.getByTestId("users")).toContainText("rotator");

  const reset = page.getByTestId("reset-password");
  await reset.getByLabel("Username").fill("rotator");
  await reset.getByLabel("Temporary password").fill("temporary-password");
  await reset.getByRole("button", { name: "Reset" }).click();
  await expect(page.getByText("they choose their own at the next sign-in")).toBeVisible();
  await expect(page.getByTestId("users")).toContainText("must change password");

  const phone = await browser.newContext(PHONE);
  const mobile = await phone.newPage();
  await signIn(mobile, { username: "rotator", password: "temporary-password" });
  await expect(mobile).toHaveURL(/\/account$/);
  await expect(mobile.getByTestId("must-change")).toBeVisible();
  // Nothing else is reachable until the password is changed.
  await mobile.goto("/jobs");
  await expect(mobile).toHaveURL(/\/account$/);
  await hydrated(mobile);

  const form = mobile.getByTestId("change-password");
  await form.getByLabel("Current password").fill("wrong-password");
  await form.getByLabel("New password").fill("rotator-own-password");
  await form.getByRole("button", { name: "Change password" }).click();
  await expect(form).toContainText("the current password is wrong");
  await form.getByLabel("Current password").fill("temporary-password");
  await form.getByRole("button", { name: "Change password" }).click();
  await expect(mobile.getByText("Password changed.")).toBeVisible();
  await expect(mobile.getByTestId("sessions")).toContainText("this session");
  // The table fits the phone: it scrolls inside its card, the page itself does not.
  const overflow = await mobile.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);

  await mobile.goto("/jobs");
  await expect(mobile.getByRole("heading", { name: "Jobs", level: 1 })).toBeVisible();

  // The admin disables the account: the phone's session ends with it.
  await page.reload();
  await hydrated(page);
  const row = page.getByTestId("manage-rotator");
  await row.getByRole("combobox").selectOption("disable");
  await row.getByRole("button", { name: "Apply" }).click();
  await expect(page.getByTestId("manage-outcome")).toContainText("Done.");
  await expect(page.getByTestId("users")).toContainText("disabled");
  await mobile.goto("/runs");
  await expect(mobile).toHaveURL(/\/login/);

  // The last enabled administrator cannot be demoted, and the page says why.
  const admin = page.getByTestId("manage-admin");
  await admin.getByRole("combobox").selectOption("viewer");
  await admin.getByRole("button", { name: "Apply" }).click();
  await expect(page.getByTestId("manage-outcome")).toContainText("last enabled administrator");
  await phone.close();
});
