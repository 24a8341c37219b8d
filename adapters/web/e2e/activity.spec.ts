// Activity: the events an app's users report (POST /api/events/daily)
// and its active devices per day, for those who may read the app.
import { request } from "@playwright/test";
import { Api, expect, expectAccessible, screenshot, signIn, test, unique } from "./fixtures";
import { adminPassword, baseURL } from "../playwright.config";

/** appClient signs in as the app (client_credentials) and as one identified user of it. */
async function appClient(app: { clientId: string; clientSecret: string }) {
  const ctx = await request.newContext({ baseURL });
  const tok = await ctx.post("/api/oauth/token", {
    form: { grant_type: "client_credentials", client_id: app.clientId, client_secret: app.clientSecret },
  });
  expect(tok.status(), await tok.text()).toBe(200);
  const appApi = new Api(ctx, (await tok.json()).access_token);
  const email = `${unique("reader")}@example.com`;
  await appApi.call("POST", "/api/segmentation/identified/register", {
    auth: { email, password: "a long enough password", deviceId: unique("device") },
    profile: { email, name: "Reader" },
  });
  const login = await ctx.post("/api/segmentation/identified/login", {
    headers: { Authorization: `Bearer ${appApi.token}` },
    form: { network: "halo", email, password: "a long enough password", deviceId: unique("device") },
  });
  expect(login.status(), await login.text()).toBe(200);
  return { app: appApi, user: new Api(ctx, (await login.json()).token.access_token) };
}

test("activity: the events reported today and the active devices, by type, for a reader of the app", async ({ page }) => {
  const admin = await Api.admin();
  const app = await admin.call("POST", "/core-api/app", { name: unique("Activity app") });
  const { app: appApi, user } = await appClient(app);
  // Two opens by the identified user (one active device), one device registration and one
  // location with the app's token (events only: it names no device).
  await user.call("POST", "/api/events/daily/", { type: "1", coord: "52.37,4.89" });
  await user.call("POST", "/api/events/daily/", { type: "1" });
  await appApi.call("POST", "/api/events/daily", { type: "2" });
  await appApi.call("POST", "/api/events/daily", { type: "4", coord: "3,3", extra: { room: "2B" } });
  const today = new Date().toISOString().slice(0, 10);
  await expect
    .poll(async () => (await admin.call("GET", `/api/events/daily/stats?app=${app.id}&from=${today}&to=${today}`)).days[0].events)
    .toBe(4);

  await signIn(page, "admin", adminPassword);
  await page.goto(`/cms/apps/${app.id}/modules`);
  await page.getByRole("link", { name: "Activity" }).click();
  await expect(page.getByRole("heading", { name: "Activity" })).toBeVisible();
  await expect(page.getByLabel("Events in these days: 4")).toBeVisible();
  await expect(page.getByLabel("Active devices today: 1")).toBeVisible();
  const row = page.getByRole("row", { name: new RegExp(`^${today}`) });
  await expect(row.getByRole("cell")).toHaveText(["1", "4", "2", "1", "0", "1"]);
  // Thirty days by default, one row each; seven on request, kept in the address.
  await expect(page.getByRole("row")).toHaveCount(31);
  await page.getByText("7 days").click();
  await expect(page).toHaveURL(/days=7/);
  await expect(page.getByRole("row")).toHaveCount(8);
  await expectAccessible(page, "the activity screen");
  await screenshot(page, "activity");
});

test("activity: a user who may not read the app is told why, and the API refuses them", async ({ page }) => {
  const admin = await Api.admin();
  const app = await admin.app(unique("Private activity"));
  const other = await admin.app(unique("Their app"));
  const name = unique("editor");
  const password = "a long enough password";
  const u = await admin.user(name, password);
  await admin.grant(u.id, other.id, ["read", "write"]);

  await signIn(page, name, password);
  await page.goto(`/cms/apps/${app.id}/activity`);
  await expect(page.getByText(/You may not read this app: it needs the “read” right/)).toBeVisible();
  await expect(page.getByRole("table")).toHaveCount(0);
  await expectAccessible(page, "the activity screen without the right");

  const api = await Api.signIn(name, password);
  await api.call("GET", `/api/events/daily/stats?app=${app.id}`, undefined, [403]);
  // Their own app's figures they may read.
  await api.call("GET", `/api/events/daily/stats?app=${other.id}`, undefined, [200]);
});
