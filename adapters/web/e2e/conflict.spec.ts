// No lost updates: two editors change the same item; the second one's save
// is refused and they choose, field by field, between their version and
// the one saved meanwhile. A read-only user sees a read-only editor, and
// the API refuses them anyway.
import { Api, expect, expectAccessible, screenshot, signIn, test, unique } from "./fixtures";

const T = (n: number) => n.toString().padStart(24, "0");
const password = "correct-horse-battery";

test("two editors, one item: the second save opens the conflict dialog, and what they choose is saved", async ({ browser }) => {
  const admin = await Api.admin();
  const app = await admin.app();
  const mod = await admin.module(app.id, unique("Events"), [
    { name: "title", type: T(1) },
    { name: "place", type: T(1) },
    { name: "body", type: T(12) },
  ]);
  const item = await admin.item(mod.id, "Summer fair", { title: "Summer fair", place: "Park", body: "Music and food." });
  const alice = unique("alice");
  const bob = unique("bob");
  for (const u of [alice, bob]) {
    const { id } = await admin.user(u, password);
    await admin.grant(id, app.id, ["read", "update"]);
  }

  const a = await (await browser.newContext()).newPage();
  const b = await (await browser.newContext()).newPage();
  await signIn(a, alice, password);
  await signIn(b, bob, password);
  await a.goto(`/cms/apps/${app.id}/items/${item.id}`);
  await b.goto(`/cms/apps/${app.id}/items/${item.id}`);

  // Bob starts editing; Alice saves first.
  await b.getByLabel("title").fill("Summer fair 2031");
  await b.getByLabel("body").fill("Music, food and games.");
  await a.getByLabel("title").fill("The summer fair");
  await a.getByLabel("place").fill("Town square");
  await a.getByRole("button", { name: "Save" }).click();
  await expect(a.getByText("Saved", { exact: true })).toBeVisible();

  await b.getByRole("button", { name: "Save" }).click();
  const dialog = b.getByRole("dialog", { name: "Someone else changed this item" });
  await expect(dialog).toBeVisible();
  await expect(dialog).toContainText(`Saved by ${alice}`);
  const title = dialog.getByRole("radiogroup", { name: "title" });
  await expect(title).toContainText("Summer fair 2031");
  await expect(title).toContainText("The summer fair");
  // Bob did not touch the place: theirs is proposed; he changed the title and the body: his are.
  await expect(dialog.getByRole("radio", { name: "Take theirs for place" })).toBeChecked();
  await expect(dialog.getByRole("radio", { name: "Keep yours for title" })).toBeChecked();
  await expect(dialog).toHaveCSS("opacity", "1"); // opened (its transition over)
  await expectAccessible(b, "the conflict dialog");
  await screenshot(b, "item-conflict");

  await dialog.getByRole("radio", { name: "Take theirs for title" }).check();
  await dialog.getByRole("button", { name: "Save these choices" }).click();
  await expect(dialog).toBeHidden();
  await expect(b.getByText("Saved", { exact: true })).toBeVisible();

  const got = await admin.call("GET", `/api/generalcontent/instance/${item.id}`);
  expect(got.values).toEqual({ title: "The summer fair", place: "Town square", body: "Music, food and games." });
  expect(got.revision).toBe(2);
  await a.context().close();
  await b.context().close();
});

test("live: the open item refreshes quietly, or says who changed it when the form holds edits", async ({ browser }) => {
  const admin = await Api.admin();
  const app = await admin.app();
  const mod = await admin.module(app.id, unique("Shows"), [{ name: "title", type: T(1) }]);
  const item = await admin.item(mod.id, "Matinee", { title: "Matinee" });
  const dave = unique("dave");
  const { id } = await admin.user(dave, password);
  await admin.grant(id, app.id, ["read", "update"]);

  const page = await (await browser.newContext()).newPage();
  await signIn(page, dave, password);
  await page.goto(`/cms/apps/${app.id}/items/${item.id}`);
  await expect(page.getByLabel("title")).toHaveValue("Matinee");

  // Not dirty: the new version simply shows.
  await admin.call("PUT", `/api/generalcontent/instance/${item.id}`, { name: "Matinee", values: { title: "Evening show" } });
  await expect(page.getByLabel("title")).toHaveValue("Evening show");

  // Dirty: a banner says who changed it; the edits stay.
  await page.getByLabel("title").fill("Late show");
  await admin.call("PUT", `/api/generalcontent/instance/${item.id}`, { name: "Matinee", values: { title: "Night show" } });
  await expect(page.getByText("Changed by Administrator just now")).toBeVisible();
  await expect(page.getByLabel("title")).toHaveValue("Late show");
  await page.getByRole("button", { name: "Compare" }).click();
  const dialog = page.getByRole("dialog", { name: "Someone else changed this item" });
  await expect(dialog.getByRole("radiogroup", { name: "title" })).toContainText("Night show");
  await dialog.getByRole("button", { name: "Use these choices" }).click();
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByText("Saved", { exact: true })).toBeVisible();
  const got = await admin.call("GET", `/api/generalcontent/instance/${item.id}`);
  expect(got.values.title).toBe("Late show");
  await page.context().close();
});

test("a read-only user sees the editor read-only, and the API refuses their change", async ({ page }) => {
  const admin = await Api.admin();
  const app = await admin.app();
  const mod = await admin.module(app.id, unique("Notes"), [{ name: "title", type: T(1) }]);
  const item = await admin.item(mod.id, "Read me", { title: "Read me" });
  const carol = unique("carol");
  const { id } = await admin.user(carol, password);
  await admin.grant(id, app.id, ["read"]);

  await signIn(page, carol, password);
  await page.goto(`/cms/apps/${app.id}/items/${item.id}`);
  await expect(page.getByText("You may read this item but not change it")).toBeVisible();
  await expect(page.getByLabel("title")).toHaveValue("Read me");
  await expect(page.getByLabel("title")).not.toBeEditable();
  await expect(page.getByLabel("Name")).not.toBeEditable();
  await expect(page.getByRole("button", { name: "Save" })).toBeDisabled();
  await expect(page.getByRole("button", { name: "Publish now" })).toBeDisabled();
  await expect(page.getByRole("button", { name: "Delete…" })).toBeDisabled();
  await expectAccessible(page, "the read-only item editor");

  const api = await Api.signIn(carol, password);
  const err = await api.call("PUT", `/api/generalcontent/instance/${item.id}`, { name: "Changed", values: { title: "Changed" } }, [403]);
  expect(err.error.status).toBe(403);
});
