import { defineConfig } from "@playwright/test";
import base from "./playwright.config";

// `make bench-load`: page loads of the release build, cold cache, on localhost and on Chrome
// DevTools' "Fast 4G" profile. Numbers to read, never pass/fail; not part of `make test`.
// With BULWARK_LOAD_TLS_PORT set (`make bench-load-h2`), the pages are loaded through Caddy
// (load/Caddyfile) over TLS and HTTP/2, as behind the reverse proxy docs/deploy/ describes.
const tlsPort = process.env.BULWARK_LOAD_TLS_PORT;
const bulwark = {
  ...(base.webServer as object),
  env: { ...((base.webServer as { env?: Record<string, string> }).env ?? {}), BULWARK_E2E_SEED_DEMO: "1" },
};

export default defineConfig({
  ...base,
  testDir: "./load",
  timeout: 600_000,
  use: tlsPort ? { ...base.use, baseURL: `https://localhost:${tlsPort}`, ignoreHTTPSErrors: true } : base.use,
  webServer: tlsPort
    ? [
        bulwark,
        {
          command: "caddy run --config load/Caddyfile --adapter caddyfile",
          url: `https://localhost:${tlsPort}/readyz`,
          ignoreHTTPSErrors: true,
          timeout: 60_000,
          reuseExistingServer: false,
          stdout: "pipe",
          stderr: "pipe",
        },
      ]
    : bulwark,
});
