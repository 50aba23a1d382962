import { defineConfig } from "@playwright/test";
import base from "./playwright.config";

// `make bench-load`: page loads of the release build, cold cache, on localhost and on Chrome
// DevTools' "Fast 4G" profile. Numbers to read, never pass/fail; not part of `make test`.
export default defineConfig({
  ...base,
  testDir: "./load",
  timeout: 600_000,
  webServer: {
    ...(base.webServer as object),
    env: { ...((base.webServer as { env?: Record<string, string> }).env ?? {}), BULWARK_E2E_SEED_DEMO: "1" },
  },
});
