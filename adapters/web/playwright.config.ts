// Browser tests: Playwright drives Debian's Chromium (no browser download)
// against a real `cms serve` on a fresh database. `make web-test` sets the
// environment; by hand:
//   E2E_DATABASE_URL=$(go run ../../cmd/devdb -fresh halocms_e2e) CMS_BIN=../../bin/cms npx playwright test
import { defineConfig } from "@playwright/test";

const port = Number(process.env.E2E_PORT ?? 18765);
export const baseURL = `http://127.0.0.1:${port}`;
export const adminPassword = "e2e-admin-password";

export default defineConfig({
  testDir: "e2e",
  timeout: 60_000,
  expect: { timeout: 10_000 },
  fullyParallel: true,
  workers: 2,
  forbidOnly: true,
  reporter: [["list"]],
  outputDir: "test-results",
  use: {
    baseURL,
    screenshot: "only-on-failure",
    viewport: { width: 1280, height: 800 },
    launchOptions: {
      executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
  projects: [{ name: "chromium", use: { browserName: "chromium" } }],
  webServer: {
    command: `${process.env.CMS_BIN ?? "../../bin/cms"} serve`,
    url: `${baseURL}/readyz`,
    timeout: 120_000,
    reuseExistingServer: false,
    stdout: "ignore",
    stderr: "pipe",
    env: {
      DATABASE_URL: process.env.E2E_DATABASE_URL ?? "",
      CMS_HTTP_ADDR: `127.0.0.1:${port}`,
      CMS_PUBLIC_URL: baseURL, // media URLs on the page's own origin
      CMS_ADMIN_USERNAME: "admin",
      CMS_ADMIN_PASSWORD: adminPassword,
      CMS_BCRYPT_COST: "4",
      CMS_DATA_DIR: "../../.data/e2e",
      CMS_LOG_LEVEL: "warn",
    },
  },
});
