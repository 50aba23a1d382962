import { expect, test } from "@playwright/test";
import { ADMIN, defineJob, hydrated, signIn } from "./helpers";

// A job's revisions on its page: saved twice, its history lists both with who made them, the
// diff shows the changed field side by side, and a restore makes a third and refills the form.

test("a job's history, a diff of two revisions, and a restore", async ({ page }) => {
  await signIn(page, ADMIN);
  const jobPage = await defineJob(page, "revised", { params: "failure_rate=0" });
  await page.goto(jobPage);
  await hydrated(page);
  await page.locator("#job-description").fill("second revision");
  await page.getByRole("button", { name: "Save job" }).click();
  await expect(page.getByTestId("save-ok")).toHaveText("Saved.");

  // The card lists the new revision as soon as the save is done.
  const card = page.getByTestId("revisions");
  const rows = card.getByTestId("revision-list").locator("tbody tr");
  await expect(rows).toHaveCount(2);
  await expect(rows.first()).toContainText("admin");
  await card.getByRole("button", { name: "Changes 1 → 2" }).click();
  const diff = card.getByTestId("revision-diff");
  await expect(diff.locator("tr[data-field=description] td.after")).toHaveText("second revision");
  await expect(diff.locator("tbody tr")).toHaveCount(1);

  await rows.nth(1).getByRole("button", { name: "Restore" }).click();
  await expect(card.getByRole("status")).toHaveText("Restored as revision 3.");
  await expect(rows).toHaveCount(3);
  await expect(rows.first()).toContainText("restored from revision 1");
  // The form shows the restored definition: saving it now would not bring back revision 2.
  await expect(page.locator("#job-description")).toHaveValue("");
});
