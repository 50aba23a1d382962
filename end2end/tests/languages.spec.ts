import { expect, Page, test } from "@playwright/test";
import { ADMIN, hydrated } from "./helpers";

// A browser that asks for Chinese: the sign-in page, then every page of the console, are
// Chinese from the server's first byte and stay Chinese once the wasm has hydrated them.
test.use({ locale: "zh-CN" });

const ENGLISH_NAVIGATION = ["Overview", "Jobs", "Runs", "Failed queue", "Traffic", "Notifications", "Settings", "Sign out"];

// Each page, its title (the <h1>) in Chinese, and one thing a person does there.
const PAGES: { path: string; title: string; action: string }[] = [
  { path: "/", title: "概览", action: "needs-attention" },
  { path: "/jobs", title: "任务", action: "新建任务" },
  { path: "/jobs/new", title: "新建任务", action: "保存任务" },
  { path: "/runs", title: "运行记录", action: "筛选" },
  { path: "/failed", title: "失败队列", action: "筛选" },
  { path: "/traffic", title: "流量", action: "查看" },
  { path: "/traffic/hits", title: "原始访问记录", action: "筛选" },
  { path: "/traffic/sites", title: "站点", action: "登记" },
  { path: "/notifications", title: "通知", action: "发送测试邮件" },
  { path: "/settings", title: "设置", action: "添加用户" },
  { path: "/maintenance", title: "维护", action: "" },
  { path: "/account", title: "账号", action: "修改密码" },
  { path: "/audit", title: "审计日志", action: "" },
  { path: "/api-docs", title: "API", action: "" },
];

/** Signs in from a sign-in page that, following the browser, is in Chinese. */
async function signInInChinese(page: Page) {
  await page.goto("/login");
  await expect(page.locator("html")).toHaveAttribute("lang", "zh-CN");
  await hydrated(page);
  await page.getByLabel("用户名").fill(ADMIN.username);
  await page.getByLabel("密码").fill(ADMIN.password);
  await page.getByRole("button", { name: "登录" }).click();
  await expect(page.getByTestId("current-user")).toHaveText(ADMIN.username);
}

test("a Chinese browser gets the console in Chinese, page by page, with no English navigation", async ({ page }) => {
  await signInInChinese(page);

  for (const { path, title, action } of PAGES) {
    await page.goto(path);
    await hydrated(page);
    await expect(page.locator("html"), path).toHaveAttribute("lang", "zh-CN");
    await expect(page.locator("h1").first(), path).toHaveText(title);
    await expect(page).toHaveTitle(new RegExp(`^${title} · Bulwark$`));
    const nav = page.locator("header.topbar");
    await expect(nav.getByRole("link", { name: "概览" })).toBeVisible();
    const headerText = (await nav.innerText()) ?? "";
    for (const english of ENGLISH_NAVIGATION) {
      expect(headerText, `${path}: "${english}" in the header`).not.toContain(english);
    }
    if (action === "needs-attention") {
      await expect(page.getByTestId("attention").getByRole("heading", { name: "需要处理" })).toBeVisible();
    } else if (action) {
      await expect(page.getByRole("button", { name: action }).or(page.getByRole("link", { name: action })).first(), path).toBeVisible();
    }
  }
});

test("the header's menu switches the console to English and back, for this person only", async ({ page }) => {
  await signInInChinese(page);
  await page.goto("/jobs");
  await hydrated(page);
  await expect(page.locator("h1")).toHaveText("任务");

  await page.getByTestId("language-switcher").selectOption("en");
  await expect(page.locator("html")).toHaveAttribute("lang", "en");
  await hydrated(page);
  await expect(page.locator("h1")).toHaveText("Jobs");
  // Chosen, it outlasts the browser's wish: a new page is English too.
  await page.goto("/failed");
  await expect(page.locator("h1")).toHaveText("Failed queue");

  // Back to following the browser, from the account page.
  await page.goto("/account");
  await hydrated(page);
  await page.getByTestId("language-form").locator("select").selectOption("");
  await page.getByTestId("language-form").getByRole("button").click();
  await expect(page.locator("html")).toHaveAttribute("lang", "zh-CN");
  await expect(page.locator("h1")).toHaveText("账号");
});

test("the retry editor's words, warnings and numbers are Chinese too", async ({ page }) => {
  await signInInChinese(page);
  await page.goto("/jobs/new");
  await hydrated(page);
  await page.locator("#retry-first").fill("10s");
  await page.locator("#retry-multiplier").fill("6");
  await page.locator("#retry-max").fill("12");
  await expect(page.getByTestId("warnings")).toContainText("倍数 6.0 会让间隔急剧膨胀");
  await expect(page.getByTestId("total-wait")).toContainText(/天|小时/);
  // A refusal, as you type, in Chinese too.
  await page.locator("#retry-first").fill("10");
  await expect(page.locator('[data-field="retry.first"]')).toContainText("缺少单位");
  await page.locator("#job-cron").fill("0 30 7 * *");
  await expect(page.getByTestId("cron-error")).toContainText("Cron 需要 6 个字段");
});
