import { defineConfig } from "@playwright/test";

// The Makefile builds the binary and the site, then runs these tests against a fresh database.
// Browsers cannot be downloaded here: Debian's Chromium is used, without sandbox (we run as root
// in CI) and without the background traffic that a closed network refuses.
const port = Number(process.env.BULWARK_E2E_PORT ?? 3100);

// Under `make test-clock` the tests, the server and the commands run with a moved clock
// (libfaketime in LD_PRELOAD). The browser keeps the real one: libfaketime slows Chromium's
// many threads to a crawl, and what the tests check is the server's idea of the date.
const { LD_PRELOAD: _clock, ...browserEnv } = process.env;

export default defineConfig({
  testDir: "./tests",
  timeout: 60_000,
  expect: { timeout: 15_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: [["list"]],
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    trace: "retain-on-failure",
    launchOptions: {
      env: browserEnv,
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-quic",
      ],
    },
  },
  projects: [{ name: "chromium", use: { browserName: "chromium" } }],
  webServer: {
    command: "bash ./start-server.sh",
    url: `http://127.0.0.1:${port}/readyz`,
    timeout: 120_000,
    reuseExistingServer: false,
    stdout: "pipe",
    stderr: "pipe",
    env: { BULWARK_E2E_PORT: String(port) },
  },
});
