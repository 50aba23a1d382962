import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { expect, test } from "@playwright/test";
import { ADMIN, defineJob, hydrated, runNow, signIn, VIEWER } from "./helpers";

// Two million numbered lines (about 15 MB), `needle-42` on line 1,500,000, and one on stderr.
const SCRIPT = "seq 1 2000000 | sed '1500000s/$/ needle-42/'; echo on-stderr-only >&2";

test("the log viewer opens on the last screen, jumps to a line, filters, marks, downloads and is found by search", async ({
  browser,
  page,
}) => {
  test.setTimeout(120_000);
  await signIn(page, ADMIN);
  await defineJob(page, "big-printer", { program: "sh", args: `-c\n${SCRIPT}` });
  const runUrl = await runNow(page, "big-printer");
  await expect(page.getByTestId("run-status").locator("[data-status]")).toHaveAttribute("data-status", "succeeded", {
    timeout: 60_000,
  });

  // A viewer reads it too.
  const context = await browser.newContext();
  const viewer = await context.newPage();
  await signIn(viewer, VIEWER);
  await viewer.goto(runUrl);
  await hydrated(viewer);
  const log = viewer.getByTestId("log-viewer");
  await expect(log.getByTestId("log-summary")).toContainText("2000001 lines");
  const lines = log.getByTestId("log-lines");
  await expect(lines.locator(".line").last()).toHaveAttribute("data-line", "2000001");
  await expect(lines.locator('.line[data-line="2000000"]')).toContainText("2000000");

  await log.getByTestId("log-goto").fill("1500000");
  await log.getByRole("button", { name: "Go" }).click();
  const target = lines.locator('.line[data-line="1500000"]');
  await expect(target).toContainText("1500000 needle-42");
  await expect(target).toHaveClass(/target/);
  await log.getByTestId("log-mark").fill("NEEDLE");
  await expect(target.locator("mark")).toHaveText("needle");
  await log.getByTestId("log-later").click();
  await expect(lines.locator(".line").first()).toHaveAttribute("data-line", "1500200");

  await log.getByTestId("log-stream").selectOption("stderr");
  await expect(lines.locator(".line")).toHaveCount(1);
  await expect(lines.locator(".line.stderr")).toContainText("on-stderr-only");

  // The download is the command's own output, byte for byte.
  const href = await log.getByTestId("log-download").getAttribute("href");
  const download = await viewer.request.get(href!);
  expect(download.status()).toBe(200);
  expect(download.headers()["content-disposition"]).toContain("attachment");
  const expected = execFileSync("sh", ["-c", SCRIPT], { stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 << 20 });
  const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");
  // stdout and stderr interleave in the log as their readers got them: two pipes, read at
  // once, keep no order between them (on a busy host the stderr line can come before the end
  // of stdout). So: the stderr line once, at a line's start, and without it stdout byte for
  // byte.
  const body = await download.body();
  const stderrLine = Buffer.from("on-stderr-only\n");
  const at = body.indexOf(stderrLine);
  expect(at === 0 || body[at - 1] === 0x0a).toBe(true);
  expect(body.indexOf(stderrLine, at + 1)).toBe(-1);
  const stdoutOnly = Buffer.concat([body.subarray(0, at), body.subarray(at + stderrLine.length)]);
  expect(sha(stdoutOnly)).toBe(sha(expected));

  // Found from the Runs page, and the link lands on the line.
  await viewer.goto("/runs");
  await hydrated(viewer);
  await viewer.getByTestId("output-search").fill("needle-42");
  await viewer.getByRole("button", { name: "Search" }).click();
  const hit = viewer.getByTestId("search-hits").locator('tbody tr[data-line="1500000"]');
  await expect(hit).toContainText("big-printer");
  await expect(hit.locator("mark")).toHaveText("needle-42");
  await hit.getByRole("link").click();
  await expect(viewer.getByTestId("log-lines").locator('.line[data-line="1500000"]')).toHaveClass(/target/);
  await context.close();
});
