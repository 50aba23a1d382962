import { expect, test } from "@playwright/test";
import { ADMIN, VIEWER, hydrated, signIn } from "./helpers";

const PAGES = [
  { nav: "Overview", path: "/", heading: "Overview" },
  { nav: "Jobs", path: "/jobs", heading: "Jobs" },
  { nav: "Runs", path: "/runs", heading: "Runs" },
  { nav: "Failed queue", path: "/failed", heading: "Failed queue" },
  { nav: "Traffic", path: "/traffic", heading: "Traffic" },
  { nav: "Notifications", path: "/notifications", heading: "Notifications" },
  { nav: "Settings", path: "/settings", heading: "Settings" },
];

test("an anonymous visit is sent to the sign-in page and comes back after it", async ({ page }) => {
  await page.goto("/settings");
  await expect(page).toHaveURL(/\/login\?next=%2Fsettings$/);
  await hydrated(page);
  await page.getByLabel("Username").fill(ADMIN.username);
  await page.getByLabel("Password").fill(ADMIN.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/settings$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Settings");
});

test("bad sign-ins say what is wrong and sign nobody in", async ({ page }) => {
  await page.goto("/login");
  await hydrated(page);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("username-error")).toHaveText("username is required");

  await page.getByLabel("Username").fill("admin");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("password-error")).toHaveText("password is required");

  await page.getByLabel("Password").fill("not-the-password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("password-error")).toHaveText("unknown username or wrong password");

  await page.getByLabel("Username").fill("nobody");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("password-error")).toHaveText("unknown username or wrong password");

  await page.goto("/");
  await expect(page).toHaveURL(/\/login/);
});

test("an admin sees the layout, visits every page, and signs out", async ({ page }) => {
  await signIn(page, ADMIN);
  await expect(page.locator(".role")).toHaveText("admin");

  // Client-side navigation proves the app hydrated: a full reload would clear this marker.
  await page.evaluate(() => ((window as any).__bulwarkMarker = 1));
  for (const p of PAGES) {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: p.nav, exact: true }).click();
    await expect(page).toHaveURL(new RegExp(`${p.path}$`));
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(p.heading);
  }
  expect(await page.evaluate(() => (window as any).__bulwarkMarker)).toBe(1);

  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/login$/);
  await page.goto("/");
  await expect(page).toHaveURL(/\/login\?next=%2F$/);
});

test("the overview draws its chart in the browser with the vendored ECharts", async ({ page }) => {
  await signIn(page, ADMIN);
  await page.goto("/");
  await hydrated(page);
  await expect(page.getByTestId("runs-total")).toContainText(/No runs yet|runs in the last 24 hours/);
  await expect(page.locator("#runs-chart[data-drawn=true] canvas")).toHaveCount(1);
  // The script came from this server, not a CDN.
  const scripts = await page.evaluate(() => Array.from(document.scripts).map((s) => s.src).filter(Boolean));
  for (const src of scripts) expect(new URL(src).host).toBe(new URL(page.url()).host);
});

test("an admin adds a viewer from the Settings page", async ({ page }) => {
  await signIn(page, ADMIN);
  await page.goto("/settings");
  await hydrated(page);
  const form = page.getByTestId("add-user");
  await form.getByLabel("Username").fill("oncall");
  await form.getByLabel("Password").fill("short");
  await form.getByRole("button", { name: "Add user" }).click();
  await expect(form).toContainText("password must be at least 8 characters");

  await form.getByLabel("Password").fill("oncall-password");
  await form.getByRole("button", { name: "Add user" }).click();
  await expect(page.getByTestId("users")).toContainText("oncall");

  await form.getByRole("button", { name: "Add user" }).click();
  await expect(form).toContainText("a user named 'oncall' already exists");
});

test("a viewer reads but cannot reach an admin action", async ({ page }) => {
  await signIn(page, VIEWER);
  await page.goto("/settings");
  await hydrated(page);
  await expect(page.getByTestId("users")).toContainText("admin");
  await expect(page.getByTestId("add-user")).toHaveCount(0);
  await expect(page.getByTestId("viewer-note")).toBeVisible();

  // A forged call from the viewer's own session is refused by the server function itself.
  const answer = await page.evaluate(async () => {
    const body = new URLSearchParams({ username: "sneaky", password: "sneaky-password", role: "admin" });
    const res = await fetch("/api/users/create", { method: "POST", body });
    return { status: res.status, text: await res.text() };
  });
  expect(answer.status).toBe(403);
  expect(JSON.parse(answer.text)).toEqual({ Forbidden: "add users" });
  await page.reload();
  await expect(page.getByTestId("users")).not.toContainText("sneaky");
});

test("a page without charts leaves ECharts out; a chart reached by navigation loads it then", async ({ page }) => {
  await signIn(page, ADMIN);
  await page.goto("/jobs");
  await hydrated(page);
  const before = await page.evaluate(() => ({
    loaded: "echarts" in window,
    script: document.getElementById("echarts-script") !== null,
  }));
  expect(before).toEqual({ loaded: false, script: false });
  // Client-side navigation to the Overview: no new document, so the chart adds the script.
  await page.locator("a.brand").click();
  await expect(page).toHaveURL(/\/$/);
  await expect(page.locator("#runs-chart[data-drawn=true] canvas")).toHaveCount(1);
  expect(await page.evaluate(() => document.querySelectorAll("#echarts-script").length)).toBe(1);
});

test("every page hydrates and draws under the Content-Security-Policy, with no violation", async ({ page }) => {
  // Installed by the browser itself, before any page script, so the policy cannot hide it.
  await page.addInitScript(() => {
    (window as any).__cspViolations = [];
    document.addEventListener("securitypolicyviolation", (e) =>
      (window as any).__cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`),
    );
  });
  // A hydration mismatch (the server and the browser bundle built differently) panics in the
  // wasm or logs an error; either fails the page that caused it.
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(`${page.url()}: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`${page.url()}: ${m.text()}`);
  });
  const response = await page.goto("/login");
  const policy = response!.headers()["content-security-policy"];
  expect(policy).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=_-]{16,}' 'wasm-unsafe-eval'/);
  expect(policy).toContain("frame-ancestors 'none'");
  expect(response!.headers()["x-content-type-options"]).toBe("nosniff");
  await signIn(page, ADMIN);
  for (const path of [...PAGES.map((p) => p.path), "/account", "/jobs/new", "/audit"]) {
    await page.goto(path);
    await hydrated(page);
    const violations = await page.evaluate(() => (window as any).__cspViolations);
    expect(violations, path).toEqual([]);
  }
  // The overview's chart was drawn by ECharts, which the policy let run.
  await page.goto("/");
  await hydrated(page);
  await expect(page.locator("canvas").first()).toBeVisible();
  expect(errors).toEqual([]);
});
