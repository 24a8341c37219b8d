// Shared helpers of the browser tests: an admin API client to set up
// apps, users, rights, modules and items through the real API; sign-in
// through the real UI; an axe-core scan; screenshots for docs/.
import AxeBuilder from "@axe-core/playwright";
import { test as base, expect, request, type APIRequestContext, type Page } from "@playwright/test";
import { adminPassword, baseURL } from "../playwright.config";

export { expect };

let seq = 0;
/** unique makes names that do not collide between tests and runs. */
export function unique(prefix: string): string {
  seq++;
  return `${prefix}-${Date.now().toString(36)}${seq}${Math.floor(Math.random() * 1e4)}`;
}

/** Api is a small JSON client over the real API with a bearer token. */
export class Api {
  constructor(
    readonly ctx: APIRequestContext,
    readonly token: string,
  ) {}

  static async signIn(username: string, password: string): Promise<Api> {
    const ctx = await request.newContext({ baseURL });
    const res = await ctx.post("/api/oauth/token", { form: { grant_type: "password", username, password } });
    expect(res.status(), await res.text()).toBe(200);
    return new Api(ctx, (await res.json()).access_token);
  }

  static admin(): Promise<Api> {
    return Api.signIn("admin", adminPassword);
  }

  async call<T = any>(method: string, path: string, body?: unknown, want = [200, 201, 204]): Promise<T> {
    const res = await this.ctx.fetch(path, {
      method,
      headers: { Authorization: `Bearer ${this.token}` },
      data: body === undefined ? undefined : body,
    });
    const text = await res.text();
    expect(want, `${method} ${path}: ${res.status()} ${text}`).toContain(res.status());
    return (text ? JSON.parse(text) : undefined) as T;
  }

  async app(name = unique("app")): Promise<{ id: string; name: string }> {
    return this.call("POST", "/core-api/app", { name });
  }

  async user(username: string, password: string, extra: Record<string, unknown> = {}): Promise<{ id: string }> {
    return this.call("POST", "/core-api/user", { username, password, name: username, ...extra });
  }

  async grant(user: string, app: string, permissions: string[], scope: { module?: string; item?: string } = {}) {
    return this.call("POST", "/api/authentication/right/grant", { user, app, permissions, ...scope });
  }

  async module(app: string, name: string, fields: unknown[]): Promise<{ id: string; name: string; fields: any[] }> {
    return this.call("POST", "/api/generalcontent/module", { app, name, fields });
  }

  async item(module: string, name: string, values: Record<string, unknown>): Promise<{ id: string; revision: number }> {
    return this.call("POST", "/api/generalcontent/instance", { module, name, values });
  }
}

/** signIn signs in through the sign-in page and waits for the shell. */
export async function signIn(page: Page, username: string, password: string) {
  await page.goto("/cms/sign-in");
  await page.getByLabel("Username").fill(username);
  await page.getByRole("textbox", { name: "Password" }).fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("banner").getByText("HALO CMS")).toBeVisible();
}

/** expectAccessible fails on any serious or critical axe-core violation. */
export async function expectAccessible(page: Page, what: string) {
  await settled(page);
  const result = await new AxeBuilder({ page }).analyze();
  const bad = result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help}\n  ${v.nodes.map((n) => n.target.join(" ")).join("\n  ")}`);
  expect(bad, `accessibility of ${what}`).toEqual([]);
}

/**
 * settled waits for the page's finite animations and transitions (a dialog
 * fading in, a menu sliding open) to end: colours checked half-way through a
 * fade are not the colours anyone reads. Endless ones (loaders) are ignored.
 */
export async function settled(page: Page) {
  await page.evaluate(() =>
    Promise.all(
      document
        .getAnimations()
        .filter((a) => a.effect?.getComputedTiming().iterations !== Infinity)
        .map((a) => a.finished.catch(() => undefined)),
    ),
  );
}

/**
 * screenshot takes a picture of the page: into docs/screenshots/ when
 * E2E_SCREENSHOTS=docs (`make screenshots`), else into test-results/, so
 * that a test run leaves the committed pictures alone.
 */
export async function screenshot(page: Page, name: string) {
  await settled(page);
  const dir = process.env.E2E_SCREENSHOTS === "docs" ? "../../docs/screenshots" : "test-results/screenshots";
  await page.screenshot({ path: `${dir}/${name}.png`, fullPage: false });
}

export const test = base;
