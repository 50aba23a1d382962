import { expect, test } from "@playwright/test";
import { ChildProcess, spawn } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hydrated } from "./helpers";

// The binary on its own: copied into an empty directory, started there with nothing beside it
// (no site directory, no config file, no environment but an address and a first password), it
// serves its pages, its compressed and immutable assets, and pages hydrate.

const port = Number(process.env.BULWARK_E2E_PORT ?? 3100) + 90;
const base = `http://127.0.0.1:${port}`;
let dir = "";
let server: ChildProcess | undefined;
let log = "";

test.beforeAll(async () => {
  test.setTimeout(120_000);
  const bin = process.env.BULWARK_BIN;
  if (!bin) throw new Error("set BULWARK_BIN to the built bulwark (make test does)");
  dir = mkdtempSync(join(tmpdir(), "bulwark-alone-"));
  copyFileSync(bin, join(dir, "bulwark"));
  server = spawn(join(dir, "bulwark"), ["serve"], {
    cwd: dir,
    env: {
      PATH: "/usr/bin:/bin",
      BULWARK_ADDR: `127.0.0.1:${port}`,
      BULWARK_ADMIN_PASSWORD: "alone-password",
    },
  });
  server.stdout?.on("data", (d) => (log += d));
  server.stderr?.on("data", (d) => (log += d));
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${base}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the copied binary did not become ready:\n${log}`);
});

test.afterAll(() => {
  server?.kill("SIGTERM");
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("the binary alone serves its site compressed, cached for good, and hydrates", async ({
  page,
  request,
}) => {
  const html = await (await request.get(`${base}/login`)).text();
  const wasm = html.match(/href="(\/assets\/[0-9a-f]{16}\/pkg\/bulwark_bg\.wasm)"/)?.[1];
  expect(wasm, "the page links the wasm by its content hash").toBeTruthy();
  const res = await request.get(`${base}${wasm}`, { headers: { "accept-encoding": "br, gzip" } });
  expect(res.status()).toBe(200);
  expect(res.headers()["content-encoding"]).toBe("br");
  expect(res.headers()["content-type"]).toBe("application/wasm");
  expect(res.headers()["cache-control"]).toBe("public, max-age=31536000, immutable");
  // Another hash is not this build's file.
  const stale = await request.get(`${base}${wasm!.replace(/[0-9a-f]{16}/, "0000000000000000")}`);
  expect(stale.status()).toBe(404);
  // The page's own group of chunks (app/src/pages/routes.rs) is asked for beside the main
  // module, from the same hashed directory, and served the same way.
  const chunk = html.match(/href="(\/assets\/[0-9a-f]{16}\/pkg\/split_sign_in\.wasm)"[^>]*rel="preload"|rel="preload"[^>]*href="(\/assets\/[0-9a-f]{16}\/pkg\/split_sign_in\.wasm)"/);
  const chunkUrl = chunk?.[1] ?? chunk?.[2];
  expect(chunkUrl, "the sign-in page preloads its chunk").toBeTruthy();
  expect(chunkUrl!.slice(0, 25)).toBe(wasm!.slice(0, 25));
  const chunkRes = await request.get(`${base}${chunkUrl}`, { headers: { "accept-encoding": "br" } });
  expect(chunkRes.status()).toBe(200);
  expect(chunkRes.headers()["cache-control"]).toBe("public, max-age=31536000, immutable");
  // Pages are compressed on the way out and never cached.
  const page_ = await request.get(`${base}/login`, { headers: { "accept-encoding": "gzip" } });
  expect(page_.headers()["content-encoding"]).toBe("gzip");
  expect(page_.headers()["cache-control"]).toBe("no-store");

  await page.goto(`${base}/login`);
  await hydrated(page);
  await page.getByLabel("Username").fill("admin");
  await page.getByLabel("Password").fill("alone-password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("current-user")).toHaveText("admin");
  // Moving to a page of another group fetches that group's chunk and renders it in the
  // browser, without a page load.
  const fetched = page.waitForRequest(/\/pkg\/split_job_editor\.wasm$/);
  await page.evaluate(() => ((window as any).__pageLoadMark = true));
  await page.getByRole("link", { name: "Jobs", exact: true }).first().click();
  await page.getByRole("link", { name: "New job" }).click();
  await fetched;
  await expect(page.locator("#job-name")).toBeVisible();
  expect(await page.evaluate(() => (window as any).__pageLoadMark)).toBe(true);
});
