import { Api, expect, expectAccessible, screenshot, signIn, test, unique } from "./fixtures";

const text = "000000000000000000000001";

// Two editors in two browsers: what the first changes reaches the second
// without a reload, through the live stream of the app's changes. The
// second browser watches the shell's live indicator and its list of
// recent changes, opened before the change (a reload would close it);
// the content screens' own tests check that their lists and items follow.
test("a change by one editor reaches another editor's browser live", async ({ browser }) => {
  const admin = await Api.admin();
  const app = await admin.app(unique("Live app"));
  const mod = await admin.module(app.id, "News", [{ name: "title", type: text }]);
  const password = "live-editor-password";
  const [writerName, watcherName] = [unique("writer"), unique("watcher")];
  const writer = await admin.user(writerName, password);
  const watcher = await admin.user(watcherName, password);
  await admin.grant(writer.id, app.id, ["read", "write", "update"]);
  await admin.grant(watcher.id, app.id, ["read"]);

  const first = await browser.newContext();
  const second = await browser.newContext();
  const a = await first.newPage();
  const b = await second.newPage();
  await signIn(a, writerName, password);
  await signIn(b, watcherName, password);
  await a.goto(`/cms/apps/${app.id}/modules`);
  await b.goto(`/cms/apps/${app.id}/modules`);

  const dot = b.getByRole("button", { name: "Live updates: connected" });
  await expect(dot).toBeVisible();
  await expect(a.getByRole("button", { name: "Live updates: connected" })).toBeVisible();
  await dot.click();
  const panel = b.getByRole("dialog", { name: "Live updates" });
  await expect(panel.getByText("No change since you opened this app.")).toBeVisible();
  await expectAccessible(b, "the shell with the live indicator open");

  // The first editor creates and edits an item (through the API).
  const api = await Api.signIn(writerName, password);
  const item = await api.item(mod.id, "Road works", { title: "Road works on the A1" });
  await api.call("PUT", `/api/generalcontent/instance/${item.id}`, { module: mod.id, name: "Road works", values: { title: "Closed" } });

  const changes = panel.getByRole("list", { name: "Recent changes" }).getByRole("listitem");
  await expect(changes).toHaveCount(2);
  await expect(changes.nth(0)).toContainText(`Item edited by ${writerName}`);
  await expect(changes.nth(1)).toContainText(`Item created by ${writerName}`);
  await expect(changes.nth(0).getByRole("link")).toHaveAttribute("href", `/cms/apps/${app.id}/items/${item.id}`);
  await screenshot(b, "live-updates");

  // Signing out ends the stream.
  await b.keyboard.press("Escape");
  const ended = b.waitForEvent("requestfailed", (r) => r.url().includes("/api/generalcontent/events"));
  await b.getByRole("button", { name: /Account: / }).click();
  await b.getByRole("menuitem", { name: "Sign out" }).click();
  await ended;
  await expect(b).toHaveURL(/\/cms\/sign-in/);

  await first.close();
  await second.close();
});

// A user without any right on the app gets no stream, and is told so.
test("the live indicator says when the app's changes are not available", async ({ page }) => {
  const admin = await Api.admin();
  const app = await admin.app(unique("Live closed"));
  const name = unique("outsider");
  await admin.user(name, "outsider-password");
  await signIn(page, name, "outsider-password");
  await page.goto(`/cms/apps/${app.id}/modules`);
  await expect(page.getByRole("button", { name: "Live updates: not available" })).toBeVisible();
});
