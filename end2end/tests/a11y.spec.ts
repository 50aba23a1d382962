import AxeBuilder from "@axe-core/playwright";
import { expect, Page, test } from "@playwright/test";
import { ADMIN, defineJob, hydrated, runNow, signIn } from "./helpers";

// Every page a signed-in admin can open (ids filled in from the data the test makes).
const PAGES = [
  "/",
  "/jobs",
  "/jobs/new",
  "/jobs/:job",
  "/runs",
  "/runs/:run",
  "/failed",
  "/traffic",
  "/traffic/hits",
  "/traffic/sites",
  "/notifications",
  "/settings",
  "/maintenance",
  "/account",
  "/audit",
  "/api-docs",
];

const SIZES = [
  { name: "desktop", width: 1280, height: 800 },
  { name: "phone", width: 390, height: 844 },
];

/** Serious and critical WCAG 2 A/AA violations, one line each (empty: none). */
async function violations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(", ")}`);
}

test("every page passes an axe-core scan and fits a phone", async ({ page }) => {
  test.setTimeout(180_000);
  await signIn(page, ADMIN);
  // A job and a run, so the pages that show one have something to show.
  const jobUrl = await defineJob(page, "a11y-job", { params: "failure_rate=0", tags: "a11y" });
  const job = jobUrl.match(/\/jobs\/(\d+)/)![1];
  await runNow(page, "a11y-job");
  const run = page.url().match(/\/runs\/(\d+)/)![1];

  const found: string[] = [];
  for (const size of SIZES) {
    await page.setViewportSize({ width: size.width, height: size.height });
    for (const path of PAGES) {
      const url = path.replace(":job", job).replace(":run", run);
      await page.goto(url);
      await hydrated(page);
      await expect(page.locator("h1").first()).toBeVisible();
      for (const v of await violations(page)) found.push(`${size.name} ${url}: ${v}`);
      if (size.name === "phone") {
        // Nothing wider than the screen: wide tables scroll inside themselves.
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        if (overflow > 0) found.push(`${size.name} ${url}: the page is ${overflow}px wider than the screen`);
      }
    }
  }
  // Signed out: the sign-in page.
  await page.getByRole("button", { name: "Sign out" }).click();
  for (const size of SIZES) {
    await page.setViewportSize({ width: size.width, height: size.height });
    await page.goto("/login");
    await hydrated(page);
    for (const v of await violations(page)) found.push(`${size.name} /login: ${v}`);
  }
  expect(found).toEqual([]);
});

test("the run page's re-trigger and the failed queue's actions are reachable with a thumb and a keyboard", async ({
  page,
}) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await signIn(page, ADMIN);
  await defineJob(page, "a11y-dead", { params: "failure_rate=1" });
  await runNow(page, "a11y-dead", "dead");
  const retrigger = page.getByRole("button", { name: "Re-trigger now" });
  await retrigger.scrollIntoViewIfNeeded();
  const box = (await retrigger.boundingBox())!;
  expect(box.x).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width).toBeLessThanOrEqual(390);
  expect(box.height).toBeGreaterThanOrEqual(32);

  await page.goto("/failed");
  await hydrated(page);
  const action = page.getByTestId("queue").getByRole("button", { name: "Re-trigger" }).first();
  await action.scrollIntoViewIfNeeded();
  const actionBox = (await action.boundingBox())!;
  expect(actionBox.x).toBeGreaterThanOrEqual(0);
  expect(actionBox.x + actionBox.width).toBeLessThanOrEqual(390);
  // By keyboard: the focus reaches it, visibly.
  await action.focus();
  await page.keyboard.press("Shift+Tab");
  await page.keyboard.press("Tab");
  await expect(action).toBeFocused();
  const outline = await action.evaluate((el) => getComputedStyle(el).outlineStyle);
  expect(outline).not.toBe("none");
});
