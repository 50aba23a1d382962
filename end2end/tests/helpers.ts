import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { expect, Locator, Page } from "@playwright/test";

export const ADMIN = { username: "admin", password: "admin-e2e-password" };
export const VIEWER = { username: "viewer", password: "viewer-e2e-password" };

/** The database of the server under test (start-server.sh). */
export const DATABASE = path.resolve(__dirname, "../.run/e2e.db");

/** Runs the built `bulwark` against the server's database, with the server's configuration
 * (its secret key too: commands that seal refuse another). */
export function bulwark(...args: string[]): string {
  const env = {
    ...process.env,
    DATABASE_URL: `sqlite://${DATABASE}?mode=rwc`,
    BULWARK_SECRET_KEY_FILE: path.resolve(__dirname, "../.run/secret.key"),
  };
  return execFileSync(process.env.BULWARK_BIN!, args, { env, encoding: "utf8" });
}

/** Today as the server counts days (its clock, its zone): the first date `bulwark traffic stats
 * --range today` prints. A test that expects figures on a day derives it from this once and
 * then names it (`from=D&to=D`), so a run that spans midnight still looks at the same day. */
export function serverToday(): string {
  const first = bulwark("traffic", "stats", "--range", "today").split("\n")[0];
  const day = /^(\d{4}-\d{2}-\d{2}) to /.exec(first)?.[1];
  if (!day) throw new Error(`no date in the first line of traffic stats: ${first}`);
  return day;
}

/** The date `days` before `day` (both YYYY-MM-DD). */
export function daysBefore(day: string, days: number): string {
  const at = new Date(`${day}T00:00:00Z`);
  at.setUTCDate(at.getUTCDate() - days);
  return at.toISOString().slice(0, 10);
}

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

/** A job as the tests define it in the editor: a built-in (`params`, e.g. `failure_rate=1`) or a
 * command (`program` and `args`, one per line), firing once a year unless `cron` says otherwise,
 * retried fast (100 ms, once). Returns the job's page. */
export async function defineJob(
  page: Page,
  name: string,
  job: { params?: string; program?: string; args?: string; cron?: string; tags?: string; description?: string },
): Promise<string> {
  await page.goto("/jobs/new");
  await hydrated(page);
  await page.locator("#job-name").fill(name);
  if (job.program) {
    await page.locator("#job-kind").selectOption("command");
    await page.locator("#job-command_program").fill(job.program);
    await page.locator("#job-command_args").fill(job.args ?? "");
  } else {
    await page.locator("#job-kind").selectOption("builtin");
    await page.locator("#job-builtin_params").fill(job.params ?? "");
  }
  await page.locator("#job-cron").fill(job.cron ?? "0 0 0 1 1 *");
  if (job.tags) await page.locator("#job-tags").fill(job.tags);
  if (job.description) await page.locator("#job-description").fill(job.description);
  await page.locator("#retry-first").fill("100ms");
  await page.locator("#retry-max").fill("1");
  await page.locator("#retry-cap").fill("");
  await page.getByRole("button", { name: "Save job" }).click();
  await expect(page).toHaveURL(/\/jobs\/\d+\?saved=1$/);
  return page.url().replace("?saved=1", "");
}

/** A Jobs page row's action folded under its "More" (Pause, Resume, Disable, Enable, Delete):
 * opens the menu when it is closed, then presses the button. */
export async function jobAction(row: Locator, name: string) {
  const more = row.locator("details.more");
  if (!(await more.evaluate((d) => (d as HTMLDetailsElement).open))) await more.locator("summary").click();
  await row.getByRole("button", { name, exact: true }).click();
}

/** Run now from the Jobs page; waits for the run's page and, with `until`, for that status. */
export async function runNow(page: Page, name: string, until?: string): Promise<string> {
  await page.goto(`/jobs?q=${name}`);
  await hydrated(page);
  await page.locator(`tr[data-job="${name}"]`).getByRole("button", { name: "Run now" }).click();
  await expect(page).toHaveURL(/\/runs\/\d+$/);
  if (until) {
    await expect(page.getByTestId("run-status").locator("[data-status]")).toHaveAttribute("data-status", until, {
      timeout: 30_000,
    });
  }
  return page.url();
}
