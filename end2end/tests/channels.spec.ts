import { expect, test } from "@playwright/test";
import http from "node:http";
import { AddressInfo } from "node:net";
import { ADMIN, VIEWER, hydrated, signIn } from "./helpers";

/** A DingTalk robot standing in: answers `answer` and keeps the requests' queries and bodies. */
async function robot(answer: object) {
  const seen: { url: string; body: string }[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      seen.push({ url: req.url ?? "", body });
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}/robot/send?access_token=e2e-token-31`, seen, server };
}

test("an admin adds a chat channel, sends a test and sees the platform's answer", async ({ page }) => {
  const ok = await robot({ errcode: 0, errmsg: "ok" });
  const refusing = await robot({ errcode: 310000, errmsg: "keywords not in content" });
  try {
    await signIn(page, ADMIN);
    await page.goto("/notifications");
    await hydrated(page);
    const form = page.getByTestId("add-channel");
    for (const [name, url] of [["ops-ding", ok.url], ["strict-ding", refusing.url]]) {
      await form.getByLabel("Name").fill(name);
      await form.getByLabel("Kind").selectOption("dingtalk");
      await form.getByLabel("URL").fill(url);
      await form.getByRole("button", { name: "Add channel" }).click();
      await expect(page.getByTestId("channel-list")).toContainText(name);
    }
    // Only the host shows, never the token.
    await expect(page.getByTestId("channel-list")).not.toContainText("e2e-token-31");

    const row = (name: string) => page.getByTestId("channel-list").getByRole("row").filter({ hasText: name });
    await row("ops-ding").getByRole("button", { name: "Send test" }).click();
    await expect(page.getByTestId("channel-test-answer")).toContainText("ops-ding accepted: HTTP 200");
    expect(ok.seen).toHaveLength(1);
    expect(JSON.parse(ok.seen[0].body).msgtype).toBe("markdown");

    await row("strict-ding").getByRole("button", { name: "Send test" }).click();
    await expect(page.getByTestId("channel-test-answer")).toContainText("errcode 310000: keywords not in content");
    await expect(row("strict-ding")).toContainText("errcode 310000");

    // A refused edit says why and leaves the form open as typed, to be corrected.
    const edit = row("strict-ding").locator("details.edit-channel");
    await edit.locator("summary").click();
    await edit.getByLabel("New URL (blank: keep)").fill("robot.example.com/send");
    await edit.getByRole("button", { name: "Save" }).click();
    await expect(page.getByTestId("channels")).toContainText("the URL must start with https://");
    await expect(edit).toHaveAttribute("open", "");
    await expect(edit.getByLabel("New URL (blank: keep)")).toHaveValue("robot.example.com/send");

    // A job that always fails, its alerts ticked to go to ops-ding in the editor.
    await page.goto("/jobs/new");
    await hydrated(page);
    await page.locator("#job-name").fill("chat-alerted");
    await page.locator("#job-kind").selectOption("builtin");
    await page.locator("#job-builtin_params").fill("failure_rate=1\nsleep=10ms");
    await page.locator("#job-cron").fill("0 0 0 1 1 *");
    await page.locator("#retry-first").fill("100ms");
    await page.locator("#retry-max").fill("1");
    await page.locator("#retry-jitter").selectOption("none");
    await page.locator("#retry-cap").fill("");
    await page.locator('[data-field-group="alert_channels"] input[data-channel="ops-ding"]').check();
    await page.getByRole("button", { name: "Save job" }).click();
    await expect(page).toHaveURL(/\/jobs\/\d+\?saved=1$/);
    await expect(page.locator('[data-field-group="alert_channels"] input[data-channel="ops-ding"]')).toBeChecked();

    await page.goto("/jobs");
    await hydrated(page);
    await page.locator('tr[data-job="chat-alerted"]').getByRole("button", { name: "Run now" }).click();
    await expect(page.getByTestId("run-status").locator("[data-status]")).toHaveAttribute("data-status", "dead", {
      timeout: 30_000,
    });
    // The first failure reaches the robot, through the channel outbox.
    await expect.poll(() => ok.seen.length, { timeout: 15_000 }).toBe(2);
    const alert = JSON.parse(ok.seen[1].body);
    expect(alert.markdown.title).toBe("chat-alerted failed: transient");
    expect(alert.markdown.text).toContain("demo failure");
    expect(alert.markdown.text).toMatch(/\/runs\/\d+\)/);

    await page.goto("/notifications");
    await hydrated(page);
    const message = page.getByTestId("deliveries").getByRole("row").filter({ hasText: "chat-alerted failed" });
    await expect(message).toContainText("sent");
    await expect(message).toContainText("errcode");
  } finally {
    ok.server.close();
    refusing.server.close();
  }
});

test("a viewer sees the channels but cannot add or test one", async ({ page }) => {
  await signIn(page, VIEWER);
  await page.goto("/notifications");
  await hydrated(page);
  await expect(page.getByTestId("channels")).toBeVisible();
  await expect(page.getByTestId("add-channel")).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Send test" })).toHaveCount(0);
});
