import { expect, test } from "@playwright/test";
import { ADMIN, VIEWER, hydrated, signIn } from "./helpers";

test("an admin creates an API token, sees it once, uses it and revokes it", async ({ page, request }) => {
  await signIn(page, ADMIN);
  await page.goto("/settings");
  await hydrated(page);
  const form = page.getByTestId("create-token");
  await form.getByLabel("Name").fill("e2e-pipeline");
  await form.getByLabel("Scope").selectOption("read");
  await form.getByLabel(/Expires/).fill("30d");
  await form.getByRole("button", { name: "Create token" }).click();
  const shown = page.getByTestId("new-token").locator("code");
  await expect(shown).toHaveText(/^bwk_[0-9a-f]{64}$/);
  const token = (await shown.textContent())!;
  const row = page.locator('tr[data-token="e2e-pipeline"]');
  await expect(row).toHaveAttribute("data-state", "active");
  await expect(row).not.toContainText(token);

  const jobs = await request.get("/api/v1/jobs", { headers: { Authorization: `Bearer ${token}` } });
  expect(jobs.status()).toBe(200);
  expect((await jobs.json()).items.length).toBeGreaterThan(0);

  await row.getByRole("button", { name: "Revoke" }).click();
  await expect(row).toHaveAttribute("data-state", "revoked");
  const refused = await request.get("/api/v1/jobs", { headers: { Authorization: `Bearer ${token}` } });
  expect(refused.status()).toBe(401);
});

test("the API page lists the operations from the served document", async ({ page }) => {
  await signIn(page, VIEWER);
  await page.goto("/api-docs");
  await hydrated(page);
  const operations = page.getByTestId("api-operation");
  await expect(operations.filter({ hasText: "/jobs/{name}/runs" })).toContainText("Idempotency-Key");
  expect(await operations.count()).toBeGreaterThan(15);
});

test("Run now asks for a job's parameters and the run shows them", async ({ page }) => {
  await signIn(page, ADMIN);
  await page.goto("/jobs/new");
  await hydrated(page);
  await page.locator("#job-name").fill("with-params");
  await page.locator("#job-kind").selectOption("builtin");
  await page.locator("#job-builtin_params").fill("failure_rate=0\nsleep=10ms");
  await page.locator("#job-cron").fill("0 0 0 1 1 *");
  await page.locator("#job-parameters").fill("region: string = eu-west-1\nbatch: number required");
  await page.getByRole("button", { name: "Save job" }).click();
  await expect(page).toHaveURL(/\/jobs\/\d+\?saved=1$/);

  await page.goto("/jobs");
  await hydrated(page);
  await page.locator('tr[data-job="with-params"]').getByRole("link", { name: "Run now…" }).click();
  await hydrated(page);
  const card = page.getByTestId("run-with-parameters");
  await expect(card.getByLabel(/region/)).toHaveValue("eu-west-1");
  await card.getByRole("button", { name: "Start run" }).click();
  await expect(card.locator('[data-field="params.batch"]')).toHaveText("batch is required");
  await card.getByLabel(/batch/).fill("250");
  await card.getByRole("button", { name: "Start run" }).click();
  await expect(page).toHaveURL(/\/runs\/\d+$/);
  await expect(page.getByTestId("run-params")).toContainText('"batch":250');
  await expect(page.getByTestId("run-params")).toContainText('"region":"eu-west-1"');
});

test("an admin gives a job a trigger URL that starts runs without a token", async ({ page, request }) => {
  await signIn(page, ADMIN);
  await page.goto("/jobs");
  await hydrated(page);
  await page.locator('tr[data-job="with-params"] a').first().click();
  await hydrated(page);
  const card = page.getByTestId("trigger-url");
  await expect(card).toContainText("No trigger URL.");
  await card.getByRole("button", { name: "New trigger URL" }).click();
  const path = card.getByTestId("trigger-url-path");
  await expect(path).toHaveText(/^\/hooks\/[0-9a-f]{32}$/);
  const hook = (await path.textContent())!;
  const answer = await request.post(hook, { data: { params: { batch: 7 } } });
  expect(answer.status()).toBe(201);
  expect((await answer.json()).params).toEqual({ batch: 7, region: "eu-west-1" });

  // What it does while the job is paused changes without changing the URL.
  const whilePaused = card.locator("#hook-when-paused-now");
  await expect(whilePaused).toHaveValue("refuse");
  await whilePaused.selectOption("queue");
  await card.getByRole("button", { name: "Save" }).click();
  await expect(card.getByRole("status").filter({ hasText: "the trigger URL stays the same" })).toBeVisible();
  await page.reload();
  await hydrated(page);
  await expect(page.getByTestId("trigger-url").locator("#hook-when-paused-now")).toHaveValue("queue");
  expect((await request.post(hook, { data: { params: { batch: 8 } } })).status()).toBe(201);
});
