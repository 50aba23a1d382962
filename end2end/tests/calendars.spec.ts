import { expect, test } from "@playwright/test";
import { ADMIN, hydrated, signIn, VIEWER } from "./helpers";

const OFF = [
  "2026-09-25 中秋节",
  "2026-10-01 国庆节",
  "2026-10-02 国庆节",
  "2026-10-03 国庆节",
  "2026-10-04 国庆节",
  "2026-10-05 国庆节",
  "2026-10-06 国庆节",
  "2026-10-07 国庆节",
].join("\n");
const ON = ["2026-09-20 调休上班", "2026-10-10 调休上班"].join("\n");

test("a calendar is kept on the Settings page, the editor's preview marks its days, and a backfill previews its workdays", async ({
  browser,
  page,
}) => {
  test.setTimeout(90_000);
  await signIn(page, ADMIN);
  await page.goto("/settings");
  await hydrated(page);
  const card = page.locator("#calendars");
  await card.locator("#calendar-name").fill("cn-e2e");
  await card.locator("#calendar-base").fill("mon-fri");
  await card.locator("#calendar-off").fill(OFF);
  await card.locator("#calendar-on").fill(ON);
  await card.getByRole("button", { name: "Save calendar" }).click();
  await expect(card.getByRole("status")).toContainText("Calendar cn-e2e saved.");
  const row = card.getByTestId("calendars").locator("tr", { hasText: "cn-e2e" });
  await expect(row).toContainText("8 off, 2 make-up");
  await expect(row).toContainText("2026");
  // A date that is not one is refused, naming it; the calendar stays as it was.
  await card.locator("#calendar-on").fill("2026-02-30 nope");
  await card.getByRole("button", { name: "Save calendar" }).click();
  await expect(card.getByTestId("calendar-error")).toContainText("2026-02-30");
  await expect(row).toContainText("8 off, 2 make-up");

  // On a phone the card keeps to the screen.
  await page.setViewportSize({ width: 390, height: 800 });
  await page.reload();
  await hydrated(page);
  await expect(page.locator("#calendars")).toBeVisible();
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await page.setViewportSize({ width: 1280, height: 720 });

  // A weekday job at 09:00 in Shanghai on that calendar: the preview from 09-24.
  await page.goto("/jobs/new");
  await hydrated(page);
  await page.locator("#job-name").fill("workday-report");
  await page.locator("#job-kind").selectOption("command");
  await page.locator("#job-command_program").fill("true");
  await page.locator("#job-cron").fill("0 0 9 * * MON-FRI");
  await page.locator("#job-timezone").fill("Asia/Shanghai");
  await page.locator("#job-calendar").fill("cn-e2e");
  const preview = page.getByTestId("calendar-preview");
  await preview.locator("#job-preview-from").fill("2026-09-24");
  const items = preview.locator("li");
  await expect(items.nth(0)).toHaveText("2026-09-24 09:00:00 CST");
  await expect(items.nth(1)).toContainText("2026-09-25 09:00:00 CST 中秋节: off, skipped");
  await expect(items.nth(2)).toHaveText("2026-09-28 09:00:00 CST");
  await expect(preview.locator("li.make-up")).toContainText("2026-10-10 09:00:00 CST 调休上班: make-up workday");
  // Moved instead of skipped: the holiday's tick runs on the next workday.
  await page.locator("#job-on_off_day").selectOption("next_workday");
  await expect(items.nth(1)).toContainText("中秋节: off, runs on 2026-09-28");
  await page.locator("#job-on_off_day").selectOption("skip");
  await page.getByRole("button", { name: "Save job" }).click();
  await expect(page).toHaveURL(/\/jobs\/\d+\?saved=1$/);
  const jobUrl = page.url().replace("?saved=1", "");

  // The job page's backfill: the preview lists the thirteen workdays and makes nothing.
  await page.goto(jobUrl);
  await hydrated(page);
  const backfill = page.getByTestId("backfill");
  await backfill.locator("#backfill-from").fill("2026-09-18");
  await backfill.locator("#backfill-to").fill("2026-10-12");
  await backfill.getByTestId("backfill-preview").click();
  const ticks = backfill.getByTestId("backfill-ticks").locator("li");
  await expect(ticks).toHaveCount(13);
  await expect(ticks.nth(1)).toContainText("2026-09-20T09:00:00+08:00 2026-09-20");
  await expect(ticks.nth(12)).toContainText("2026-10-12T09:00:00+08:00 2026-10-12");
  await expect(backfill.getByTestId("backfills")).toHaveCount(0);

  // A viewer reads the calendars but is given no form.
  const viewer = await browser.newPage();
  await signIn(viewer, VIEWER);
  await viewer.goto("/settings");
  await hydrated(viewer);
  await expect(viewer.locator("#calendars").getByTestId("calendars")).toContainText("cn-e2e");
  await expect(viewer.locator("#calendar-name")).toHaveCount(0);
  await viewer.close();
});
