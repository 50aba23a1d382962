import * as fs from "node:fs";
import * as path from "node:path";
import { expect, Page, test } from "@playwright/test";
import { ADMIN, VIEWER, bulwark, hydrated, signIn } from "./helpers";

// The server under test (start-server.sh) keeps its files here, and its SMTP server
// (smtp-sink.mjs) writes every mail it accepts to the mail directory.
const runDir = path.resolve(__dirname, "../.run");
const mailDir = path.join(runDir, "mail");

function received(): string[] {
  if (!fs.existsSync(mailDir)) return [];
  return fs
    .readdirSync(mailDir)
    .sort()
    .map((f) => fs.readFileSync(path.join(mailDir, f), "utf8"));
}

/** The mail's text with quoted-printable soft breaks joined. */
function unfold(mail: string): string {
  return mail.replace(/=\r?\n/g, "").replace(/=3D/g, "=");
}

async function openNotifications(page: Page) {
  await page.goto("/notifications");
  await hydrated(page);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Notifications");
}

test("a test mail reaches the SMTP server, shows its answer, and can be previewed and resent", async ({ page }) => {
  await signIn(page, ADMIN);
  await openNotifications(page);
  await expect(page.getByTestId("mail-route")).toContainText("SMTP server smtp://127.0.0.1:");
  const before = received().length;

  // A bad address is refused where it was typed, and nothing is queued.
  const form = page.getByTestId("test-mail");
  await form.getByLabel("To").fill("not-an-address");
  await form.getByRole("button", { name: "Send test mail" }).click();
  await expect(form.locator(".field-error")).toHaveText("'not-an-address' is not an e-mail address");
  expect(received().length).toBe(before);

  await form.getByLabel("To").fill("ops@example.com");
  await form.getByRole("button", { name: "Send test mail" }).click();
  await expect(page.getByTestId("test-mail-result")).toHaveText(/Delivered \(sent\): 250 .*queued as e2e-/);
  await expect.poll(() => received().length).toBe(before + 1);
  const mail = unfold(received()[before]);
  expect(mail).toContain("Subject: [Bulwark] Test mail");
  expect(mail).toContain("To: ops@example.com");
  expect(mail).toContain("http://127.0.0.1:3100");

  // The outbox lists it as sent, with the server's answer.
  const row = page.getByTestId("outbox").locator("tbody tr").first();
  await expect(row).toHaveAttribute("data-status", "sent");
  await expect(row).toContainText("ops@example.com");
  await expect(row).toContainText("queued as e2e-");

  // Preview: the HTML part in a sandboxed frame, and the text part.
  await row.getByRole("button", { name: "Preview" }).click();
  const preview = page.getByTestId("mail-preview");
  await expect(preview.locator("h3")).toContainText("[Bulwark] Test mail");
  await expect(preview.locator("pre")).toContainText("admin sent this from Bulwark (http://127.0.0.1:3100)");
  await expect(preview.frameLocator("iframe").locator("body")).toContainText("to check that mail arrives");

  // Resend: delivered again.
  await row.getByRole("button", { name: "Resend" }).click();
  await expect.poll(() => received().length).toBe(before + 2);
  await expect(page.getByTestId("outbox").locator("tbody tr").first()).toHaveAttribute("data-status", "sent");

  // The status filter lives in the URL.
  await page.getByTestId("outbox-filter").getByRole("link", { name: "failed" }).click();
  await expect(page).toHaveURL(/status=failed/);
  await expect(page.getByTestId("outbox-empty")).toBeVisible();
});

test("a job that fails mails its recipients once, with a link to its run", async ({ page }) => {
  const jobs = path.join(runDir, "alerting-job.toml");
  fs.writeFileSync(
    jobs,
    `[[job]]
name = "e2e-always-fails"
cron = "0 0 0 1 1 *"
kind = "builtin"
task = "demo"
params = { sleep = "10ms", failure_rate = "1", fail = "permanent" }
[job.retry]
first = "1s"
multiplier = 1.0
max_retries = 1
[job.alerts]
to = ["oncall@example.com"]
escalate_after = 3
escalate_to = ["lead@example.com"]
`,
  );
  bulwark("jobs", "apply", jobs);
  // Only this job's mails: failures elsewhere in the suite may also raise trend alerts.
  const aboutJob = () =>
    received()
      .map(unfold)
      .filter((m) => m.includes("Subject: [Bulwark] e2e-always-fails"));
  const before = aboutJob().length;
  bulwark("jobs", "run", "e2e-always-fails");

  await expect.poll(() => aboutJob().length, { timeout: 30_000 }).toBe(before + 1);
  const mail = aboutJob()[before];
  expect(mail).toContain("Subject: [Bulwark] e2e-always-fails failed: permanent");
  expect(mail).toContain("To: oncall@example.com");
  expect(mail).toMatch(/http:\/\/127\.0\.0\.1:3100\/runs\/\d+/);
  expect(mail).toContain("http://127.0.0.1:3100/failed");

  await signIn(page, ADMIN);
  await openNotifications(page);
  const row = page.getByTestId("outbox").locator("tbody tr", { hasText: "e2e-always-fails" }).first();
  await expect(row).toContainText("first_failure");
  await expect(page.getByTestId("alert-routes")).toContainText("oncall@example.com");
  await expect(page.getByTestId("alert-routes")).toContainText("3 failed runs");
});

test("the digest's recipients and time are checked, saved and moved onto its job", async ({ page }) => {
  await signIn(page, ADMIN);
  await openNotifications(page);
  const form = page.getByTestId("digest-settings");
  await form.getByLabel(/Recipients/).fill("team@example.com, not an address");
  await form.getByLabel(/Time of day/).fill("25:00");
  await form.getByRole("button", { name: "Save" }).click();
  await expect(form.locator('[data-field="digest_to"]')).toHaveText("'not an address' is not an e-mail address");

  await form.getByLabel(/Recipients/).fill("team@example.com");
  await form.getByRole("button", { name: "Save" }).click();
  await expect(form.locator('[data-field="digest_time"]')).toHaveText("'25:00' is not a time of day such as 08:00");

  await form.getByLabel(/Time of day/).fill("07:30");
  await form.getByRole("button", { name: "Save" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Saved." })).toBeVisible();

  await page.reload();
  await hydrated(page);
  await expect(page.getByTestId("digest-settings").getByLabel(/Recipients/)).toHaveValue("team@example.com");
  await expect(page.getByTestId("digest-settings").getByLabel(/Time of day/)).toHaveValue("07:30");
  const listed = bulwark("jobs", "list");
  expect(listed).toMatch(/mail-digest.*0 30 7 \* \* \*/);
});

test("a viewer reads the outbox and settings but cannot send, resend or change them", async ({ page }) => {
  await signIn(page, VIEWER);
  await openNotifications(page);
  await expect(page.getByText("You are signed in as a viewer")).toBeVisible();
  await expect(page.getByTestId("test-mail")).toHaveCount(0);
  await expect(page.getByTestId("digest-settings")).toHaveCount(0);
  await expect(page.getByTestId("outbox")).toBeVisible();
  await expect(page.getByTestId("outbox").getByRole("button", { name: "Resend" })).toHaveCount(0);
});
