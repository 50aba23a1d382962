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
