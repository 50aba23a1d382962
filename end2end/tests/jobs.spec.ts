import { expect, Page, test } from "@playwright/test";
import { ADMIN, VIEWER, defineJob, hydrated, jobAction, runNow, signIn } from "./helpers";

/** The data ECharts currently draws for a series of the retry chart. */
async function seriesData(page: Page, index: number): Promise<number[]> {
  return page.evaluate((i) => {
    const chart = (window as any).echarts.getInstanceByDom(document.getElementById("retry-chart"));
    return chart.getOption().series[i].data;
  }, index);
}

async function newJob(page: Page) {
  await page.goto("/jobs/new");
  await hydrated(page);
  await expect(page.locator("#retry-chart[data-drawn=true] canvas")).toHaveCount(1);
}

test("moving the multiplier slider redraws the curve and the total without a page load", async ({ page }) => {
  await signIn(page, ADMIN);
  await newJob(page);
  await page.evaluate(() => ((window as any).__bulwarkMarker = 1));

  const before = await page.getByTestId("total-wait").textContent();
  const barsBefore = await seriesData(page, 0);
  const slider = page.getByLabel("Multiplier slider");
  await slider.focus();
  for (let i = 0; i < 10; i++) await page.keyboard.press("ArrowRight"); // 2.0 → 3.0
  await expect(page.locator("#retry-multiplier")).toHaveValue("3");
  await expect(page.getByTestId("total-wait")).not.toHaveText(before ?? "");
  await expect.poll(() => seriesData(page, 0)).not.toEqual(barsBefore);
  expect(await page.evaluate(() => (window as any).__bulwarkMarker)).toBe(1);

  // Report the redraw latency of the last move (input event → ECharts setOption done).
  const samples: number[] = [];
  for (let i = 0; i < 20; i++) {
    await page.keyboard.press(i % 2 ? "ArrowLeft" : "ArrowRight");
    await expect(page.getByTestId("retry-editor")).toHaveAttribute("data-redraw-ms", /\d/);
    samples.push(Number(await page.getByTestId("retry-editor").getAttribute("data-redraw-ms")));
  }
  samples.sort((a, b) => a - b);
  console.log(
    `retry editor redraw after a slider move: median ${samples[10].toFixed(2)} ms, ` +
      `max ${samples[19].toFixed(2)} ms over ${samples.length} moves (one frame = 16.7 ms)`,
  );
});

test("M=8 and C=16 raise the warnings, pointing at their retries", async ({ page }) => {
  await signIn(page, ADMIN);
  await newJob(page);
  await expect(page.getByTestId("warnings").locator("li")).toHaveCount(0);
  await page.locator("#retry-multiplier").fill("8");
  await page.locator("#retry-max").fill("16");
  const warnings = page.getByTestId("warnings");
  await expect(warnings.locator("li[data-kind=Explosive]")).toContainText("retries 2–16");
  await expect(warnings.locator("li[data-kind=Untunable]")).toContainText("retries 9–16");
  await expect(warnings.locator("li[data-kind=SteepTotal]")).toContainText("retries 11–16");
  await expect(page.getByTestId("sensitivity-m")).toContainText("per +0.1 of M");
  await expect(page.getByTestId("retry-times").locator("tbody tr")).toHaveCount(16);

  // A tight cron period adds the overrun warning.
  await page.locator("#job-cron").fill("0 * * * * *");
  await expect(warnings.locator("li[data-kind=OverrunsSchedule]")).toBeVisible();
});

test("an invalid first interval is explained as you type and refused on save", async ({ page }) => {
  await signIn(page, ADMIN);
  await newJob(page);
  await page.locator("#retry-first").fill("10");
  await expect(page.locator('[data-field="retry.first"]')).toHaveText(
    "first interval '10' needs a unit: ms, s, m or h (for example 10s)",
  );
  await page.locator("#retry-first").fill("0s");
  await expect(page.locator('[data-field="retry.first"]')).toHaveText("first interval must be greater than 0");

  await page.locator("#job-name").fill("refused-job");
  await page.locator("#job-http_url").fill("http://127.0.0.1:9/x");
  await page.getByRole("button", { name: "Save job" }).click();
  await expect(page.getByTestId("save-error")).toContainText("retry.first");
  await page.goto("/jobs");
  await hydrated(page);
  await expect(page.locator('tr[data-job="refused-job"]')).toHaveCount(0);
});

test("the cron field validates as you type and lists the next five fire times", async ({ page }) => {
  await signIn(page, ADMIN);
  await newJob(page);
  await page.locator("#job-cron").fill("30 7 * * *");
  await expect(page.getByTestId("cron-error")).toContainText("cron needs 6 fields");
  await page.locator("#job-cron").fill("0 30 7 * * *");
  await page.locator("#job-timezone").fill("Asia/Shanghai");
  const times = page.getByTestId("cron-preview").locator("li");
  await expect(times).toHaveCount(5);
  for (const t of await times.allTextContents()) expect(t).toMatch(/ 07:30:00 CST$/);
  // The zone's table comes from the server; the preview follows each change.
  await page.locator("#job-timezone").fill("America/New_York");
  await expect(times.first()).toHaveText(/ 07:30:00 E[SD]T$/);
  for (const t of await times.allTextContents()) expect(t).toMatch(/ 07:30:00 E[SD]T$/);
  await page.locator("#job-timezone").fill("Mars/Olympus");
  await expect(page.getByTestId("cron-error")).toContainText("time zone 'Mars/Olympus' is unknown");
  await page.locator("#job-timezone").fill("Asia/Kolkata");
  await expect(times.first()).toHaveText(/ 07:30:00 IST$/);
});

test("a saved policy comes back the same after a reload; the list toggles and deletes", async ({ page }) => {
  await signIn(page, ADMIN);
  await newJob(page);
  await page.locator("#job-name").fill("store-receipt-mail");
  await page.locator("#job-http_url").fill("http://127.0.0.1:8080/mail/receipts");
  await page.locator("#retry-first").fill("2s");
  await page.locator("#retry-multiplier").fill("3.5");
  await page.locator("#retry-max").fill("7");
  await page.locator("#retry-jitter").selectOption("equal");
  await page.locator("#retry-cap").fill("5m");
  await page.getByRole("button", { name: "Save job" }).click();
  await expect(page).toHaveURL(/\/jobs\/\d+\?saved=1$/);

  await page.reload();
  await hydrated(page);
  await expect(page.locator("#job-name")).toHaveValue("store-receipt-mail");
  await expect(page.locator("#retry-first")).toHaveValue("2s");
  await expect(page.locator("#retry-multiplier")).toHaveValue("3.5");
  await expect(page.locator("#retry-max")).toHaveValue("7");
  await expect(page.locator("#retry-jitter")).toHaveValue("equal");
  await expect(page.locator("#retry-cap")).toHaveValue("5m");

  await page.goto("/jobs");
  await hydrated(page);
  const row = page.locator('tr[data-job="store-receipt-mail"]');
  await expect(row).toContainText("enabled");
  await jobAction(row, "Disable");
  await expect(row).toContainText("disabled");
  await jobAction(row, "Delete");
  await expect(row.getByRole("alertdialog")).toContainText("Delete store-receipt-mail and its 0 runs?");
  await row.getByRole("button", { name: "Cancel" }).click();
  await expect(row).toBeVisible();
  await jobAction(row, "Delete");
  await row.getByRole("button", { name: "Yes, delete" }).click();
  await expect(row).toHaveCount(0);
});

test("a viewer sees job definitions read-only", async ({ page }) => {
  await signIn(page, ADMIN);
  await newJob(page);
  await page.locator("#job-name").fill("nightly-report");
  await page.locator("#job-http_url").fill("https://example.com/report");
  await page.getByRole("button", { name: "Save job" }).click();
  await expect(page).toHaveURL(/\/jobs\/\d+/);
  const url = page.url();
  await page.getByRole("button", { name: "Sign out" }).click();

  await signIn(page, VIEWER);
  await page.goto("/jobs");
  await hydrated(page);
  await expect(page.getByRole("link", { name: "New job" })).toHaveCount(0);
  await expect(page.locator('tr[data-job="nightly-report"]').getByRole("button")).toHaveCount(0);
  await page.goto(url);
  await hydrated(page);
  await expect(page.locator("#job-name")).toBeDisabled();
  await expect(page.getByRole("button", { name: "Save job" })).toHaveCount(0);
  const answer = await page.evaluate(async () => {
    const res = await fetch("/api/jobs/delete", { method: "POST", body: new URLSearchParams({ id: "1" }) });
    return res.status;
  });
  expect(answer).toBe(403);
});

test("a saved job shows the timeout its next attempt gets, and where it comes from", async ({ page }) => {
  await signIn(page, ADMIN);
  await newJob(page);
  await page.locator("#job-name").fill("timeout-shown");
  await page.locator("#job-http_url").fill("https://example.com/t");
  await page.locator("#job-timeout_mode").selectOption("p95");
  await page.getByRole("button", { name: "Save job" }).click();
  await expect(page).toHaveURL(/\/jobs\/\d+\?saved=1$/);
  await page.reload();
  await hydrated(page);
  await expect(page.getByTestId("effective-timeout")).toHaveText(
    "Next attempt's timeout: 5 min — from the static setting, until enough runs succeed to learn from (0 of 5 so far).",
  );
});

test("the Jobs list fits: one-line descriptions and Run now in sight at 1,400 px, a card per job on a phone", async ({
  page,
  browser,
}) => {
  await signIn(page, ADMIN);
  const description =
    "Sends the store's receipts to the accounting mailbox every night, then reconciles them with " +
    "the payment provider's settlement file and files a ticket for every receipt that does not match.";
  await defineJob(page, "fits-wide", { params: "failure_rate=0", tags: "fits,billing,nightly", description });
  await runNow(page, "fits-wide", "succeeded");

  await page.setViewportSize({ width: 1400, height: 900 });
  await page.goto("/jobs?q=fits-wide");
  await hydrated(page);
  const row = page.locator('tr[data-job="fits-wide"]');
  // The table is no wider than its card: nothing to scroll to.
  const card = page.getByTestId("jobs").locator("xpath=..");
  const [scroll, client] = await card.evaluate((el) => [el.scrollWidth, el.clientWidth]);
  expect(scroll).toBeLessThanOrEqual(client);
  // Run now and More end inside the card.
  const cardBox = (await card.boundingBox())!;
  for (const control of [row.getByRole("button", { name: "Run now" }), row.locator("summary")]) {
    const box = (await control.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(cardBox.x + cardBox.width);
  }
  // The description is one line, its whole text in the title.
  const line = row.locator(".one-line");
  await expect(line).toHaveAttribute("title", description);
  const lineHeight = await line.evaluate((el) => parseFloat(getComputedStyle(el).lineHeight));
  expect((await line.boundingBox())!.height).toBeLessThan(lineHeight * 1.5);
  // The rarer actions are one click away.
  await jobAction(row, "Pause");
  await expect(row.getByTestId("paused")).toBeVisible();
  await jobAction(row, "Resume");
  await expect(row.getByTestId("paused")).toHaveCount(0);

  // On a phone: a card per job, led by its state, last result and strip, Run now under them.
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  const mobile = await phone.newPage();
  await signIn(mobile, ADMIN);
  await mobile.goto("/jobs?q=fits-wide");
  await hydrated(mobile);
  const cardRow = mobile.locator('tr[data-job="fits-wide"]');
  const boxes = {
    state: (await cardRow.locator(".states .pill").first().boundingBox())!,
    last: (await cardRow.getByTestId("last").locator("[data-status]").boundingBox())!,
    strip: (await cardRow.getByTestId("strip").boundingBox())!,
    run: (await cardRow.getByRole("button", { name: "Run now" }).boundingBox())!,
    next: (await cardRow.locator("code.cron").boundingBox())!,
  };
  for (const [what, box] of Object.entries(boxes)) {
    expect(box.x, what).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width, what).toBeLessThanOrEqual(390);
  }
  expect(boxes.state.y).toBeLessThan(boxes.last.y);
  expect(boxes.last.y).toBeLessThan(boxes.run.y);
  expect(boxes.run.y).toBeLessThan(boxes.next.y);
  expect(Math.abs(boxes.last.y + boxes.last.height / 2 - (boxes.strip.y + boxes.strip.height / 2))).toBeLessThan(16);
  expect(boxes.run.height).toBeGreaterThanOrEqual(32);
  // The page never scrolls sideways; the sort links stay.
  expect(await mobile.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
  await expect(mobile.getByRole("link", { name: "Last result" })).toBeVisible();
  await phone.close();
});
