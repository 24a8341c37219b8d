import { Api, expect, expectAccessible, screenshot, signIn, test, unique } from "./fixtures";
import { adminPassword } from "../playwright.config";

test("sign in and out: the refresh token is an HttpOnly cookie, nothing is in storage", async ({ page, context }) => {
  await page.goto("/");
  await expect(page).toHaveURL(/\/cms\/sign-in/);
  await expectAccessible(page, "the sign-in page");
  await screenshot(page, "sign-in");

  await signIn(page, "admin", adminPassword);
  const cookies = await context.cookies();
  const refresh = cookies.find((c) => c.name === "cms_refresh");
  expect(refresh?.httpOnly).toBe(true);
  expect(refresh?.sameSite).toBe("Strict");
  expect(refresh?.path).toBe("/api/cms/session");
  const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }));
  expect(stored).not.toMatch(/[A-Za-z0-9_-]{32,}/); // no token

  // A reload keeps the session (from the cookie), without a sign-in.
  await page.reload();
  await expect(page.getByRole("button", { name: /Account: / })).toBeVisible();

  await page.getByRole("button", { name: /Account: / }).click();
  await page.getByRole("menuitem", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/cms\/sign-in/);
  // The revoked session cannot be restored.
  await page.goto("/cms/");
  await expect(page).toHaveURL(/\/cms\/sign-in/);
});

test("a wrong password is said as such", async ({ page }) => {
  await page.goto("/cms/sign-in");
  await page.getByLabel("Username").fill("admin");
  await page.getByRole("textbox", { name: "Password" }).fill("not-the-password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("alert")).toContainText("Wrong username or password");
});

test("a user outside the IP allowlist is refused, and told why", async ({ page }) => {
  const admin = await Api.admin();
  const name = unique("far");
  await admin.user(name, "far-away-password", { allowedIps: ["203.0.113.0/24"] });
  await page.goto("/cms/sign-in");
  await page.getByLabel("Username").fill(name);
  await page.getByRole("textbox", { name: "Password" }).fill("far-away-password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("alert")).toContainText("Sign-in refused from this address");
});

test("the session endpoints refuse a request without the CSRF header", async ({ request }) => {
  const res = await request.post("/api/cms/session", { data: { username: "admin", password: adminPassword } });
  expect(res.status()).toBe(403);
  const cross = await request.post("/api/cms/session", {
    data: { username: "admin", password: adminPassword },
    headers: { "X-CMS-Session": "1", Origin: "https://evil.example" },
  });
  expect(cross.status()).toBe(403);
});

test("pages carry a strict Content-Security-Policy", async ({ request }) => {
  const res = await request.get("/cms/some/deep/route");
  expect(res.status()).toBe(200);
  const csp = res.headers()["content-security-policy"];
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toContain("script-src 'self' 'unsafe-inline'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(res.headers()["x-content-type-options"]).toBe("nosniff");
});
