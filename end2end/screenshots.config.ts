import { defineConfig } from "@playwright/test";
import base from "./playwright.config";

// `make screenshots`: the README's and the book's pictures, taken from a fresh server with the demo jobs
// (start-server.sh seeds them when BULWARK_E2E_SEED_DEMO is set). Not part of `make test`.
export default defineConfig({
  ...base,
  testDir: "./screenshots",
  timeout: 180_000,
  webServer: {
    ...(base.webServer as object),
    env: { ...((base.webServer as { env?: Record<string, string> }).env ?? {}), BULWARK_E2E_SEED_DEMO: "1" },
  },
});
