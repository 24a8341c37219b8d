// Content structures: the modules list and the structure editor, driven
// through the UI and checked through the API.
import type { Locator, Page } from "@playwright/test";
import { Api, expect, expectAccessible, screenshot, signIn, test, unique } from "./fixtures";
import { adminPassword } from "../playwright.config";

const T = (n: number) => n.toString().padStart(24, "0");

/** cards: the field cards of the structure editor, in order. */
const cards = (page: Page) => page.getByRole("region", { name: /^Field \d+:/ });

/** pick chooses an option of a Select, in the list that input opens. */
async function pick(page: Page, input: Locator, option: string) {
  await input.click();
  await expect(input).toHaveAttribute("aria-expanded", "true");
  const list = page.locator(`[id="${await input.getAttribute("aria-controls")}"]`);
  await list.getByRole("option", { name: option, exact: true }).click();
}

/** addField adds a field through the editor and lets fill set its rules. */
async function addField(page: Page, name: string, type: string, fill?: (card: Locator) => Promise<void>) {
  await page.getByRole("button", { name: "Add field" }).click();
  const card = cards(page).last();
  await card.getByRole("textbox", { name: "Name", exact: true }).fill(name);
  if (type !== "Text") await pick(page, card.getByRole("combobox", { name: "Type", exact: true }), type);
  await expect(card.getByText(type, { exact: true }).first()).toBeVisible();
  if (fill) await fill(card);
}

async function options(card: Locator, values: string[]) {
  await card.getByRole("button", { name: "Add option" }).click();
  for (let i = 0; i < values.length; i++) {
    const input = card.getByLabel(`Option ${i + 1}`, { exact: true });
    await input.fill(values[i]);
    if (i < values.length - 1) await input.press("Enter");
  }
}

async function tags(card: Locator, label: string, values: string[]) {
  const input = card.getByLabel(label, { exact: true });
  for (const v of values) {
    await input.fill(v);
    await input.press("Enter");
  }
}

test("an admin builds a module with a field of every type and its rules, reorders, saves; the API has them in order", async ({ page }) => {
  test.setTimeout(240_000);
  const admin = await Api.admin();
  const app = await admin.app();
  const authors = await admin.module(app.id, unique("Authors"), [{ name: "name", type: T(1) }]);
  const name = unique("Articles");

  await signIn(page, "admin", adminPassword);
  await page.goto(`/cms/apps/${app.id}/modules`);
  await page.getByRole("button", { name: "New module" }).click();
  const dialog = page.getByRole("dialog", { name: "New module" });
  await dialog.getByRole("textbox", { name: "Name", exact: true }).fill(name);
  await dialog.getByRole("button", { name: "Create module" }).click();
  await expect(page.getByRole("heading", { name: `Structure of “${name}”` })).toBeVisible();
  await expect(page.getByText("No fields yet")).toBeVisible();

  const startsAt = "2024-01-01T00:00";
  await addField(page, "title", "Text", async (c) => {
    await c.getByLabel("Required").check();
    await c.getByLabel("Minimum length").fill("2");
    await c.getByLabel("Maximum length").fill("80");
    await c.getByLabel("Pattern", { exact: true }).fill("[A-Z].*");
    await c.getByLabel("Try the pattern").fill("hello");
    await expect(c.getByText("No match", { exact: true })).toBeVisible();
    await c.getByLabel("Try the pattern").fill("Hello");
    await expect(c.getByText("Matches", { exact: true })).toBeVisible();
    await c.getByLabel("Default value").fill("Hello");
    await c.getByLabel("Description").fill("The headline");
  });
  await addField(page, "price", "Number", async (c) => {
    await c.getByLabel("Minimum", { exact: true }).fill("10");
    await c.getByLabel("Maximum", { exact: true }).fill("5");
    // A client-side check, before any request: the maximum is below the minimum.
    await expect(c.getByText("Must be at least the minimum.")).toBeVisible();
    await c.getByLabel("Maximum", { exact: true }).fill("1000");
    await expect(c.getByText("Must be at least the minimum.")).toBeHidden();
    await c.getByLabel("Default value").fill("15");
  });
  await addField(page, "site", "Website", (c) => c.getByLabel("Maximum length").fill("200"));
  await addField(page, "trailer", "Youtube", (c) => c.getByLabel("Default value").fill("https://youtu.be/abc"));
  await addField(page, "cover", "Image", (c) => tags(c, "File types", ["jpg", "png"]));
  await addField(page, "starts", "Date", (c) => c.getByLabel("Earliest").fill(startsAt));
  await addField(page, "opens", "Time");
  await addField(page, "featured", "Boolean", (c) => pick(page, c.getByRole("combobox", { name: "Default value" }), "Yes"));
  await addField(page, "accent", "Color", async (c) => {
    await c.getByLabel("Default value").fill("#336699");
    await c.getByLabel("Default value").press("Tab"); // leaves the colour picker
  });
  await addField(page, "authors", "Multiple relation", (c) => pick(page, c.getByRole("combobox", { name: "Related items come from" }), authors.name));
  await addField(page, "mainAuthor", "Single relation", (c) => pick(page, c.getByRole("combobox", { name: "Related items come from" }), authors.name));
  await addField(page, "body", "Long text", async (c) => {
    await c.getByLabel("Localized").check();
    await pick(page, c.getByRole("combobox", { name: "Editor widget" }), "Markdown");
  });
  await addField(page, "meta", "Object", (c) => c.getByLabel("Default value").fill('{"a": 1}'));
  await addField(page, "keywords", "List", (c) => c.getByLabel("Default value").fill('["x"]'));
  await addField(page, "greeting", "Localized text", (c) => c.getByLabel("Maximum length").fill("50"));
  await addField(page, "clip", "Video", (c) => tags(c, "File types", ["mp4"]));
  await addField(page, "topics", "Multiple choice", (c) => options(c, ["news", "sport"]));
  await addField(page, "size", "Single choice", async (c) => {
    await options(c, ["S", "M", "L"]);
    await pick(page, c.getByRole("combobox", { name: "Default value" }), "M");
  });
  await addField(page, "regions", "Multiple select dropdown", (c) => options(c, ["north", "south"]));
  await addField(page, "state", "Single select dropdown", (c) => options(c, ["draft", "live"]));
  await addField(page, "jingle", "Audio", (c) => tags(c, "File types", ["mp3"]));
  await expect(cards(page)).toHaveCount(21);

  // Reorder with the keyboard: price goes above title.
  await page.getByRole("button", { name: "Move price up" }).focus();
  await page.keyboard.press("Enter");
  await expect(cards(page).first()).toHaveAccessibleName(/^Field 1: price/);
  await expect(page.getByRole("button", { name: "Move price down" })).toBeFocused();

  await expectAccessible(page, "the structure editor");
  await page.getByRole("button", { name: "Save structure" }).click();
  await expect(page.getByText("Structure saved")).toBeVisible();
  await expect(page.getByText("All changes saved")).toBeVisible();

  const m = await admin.call("GET", (await moduleUrl(page)).api);
  const byName = Object.fromEntries(m.fields.map((f: any) => [f.name, f]));
  expect(m.fields.map((f: any) => f.name)).toEqual([
    "price", "title", "site", "trailer", "cover", "starts", "opens", "featured", "accent", "authors", "mainAuthor",
    "body", "meta", "keywords", "greeting", "clip", "topics", "size", "regions", "state", "jingle",
  ]);
  expect(new Set(m.fields.map((f: any) => f.type)).size).toBe(21);
  expect(byName.title).toMatchObject({ type: T(1), required: true, description: "The headline", rules: { minLength: 2, maxLength: 80, pattern: "[A-Z].*", default: "Hello" } });
  expect(byName.price.rules).toEqual({ min: 10, max: 1000, default: 15 });
  expect(byName.site.rules).toEqual({ maxLength: 200 });
  expect(byName.trailer.rules).toEqual({ default: "https://youtu.be/abc" });
  expect(byName.cover.rules).toEqual({ mediaTypes: ["jpg", "png"] });
  expect(byName.starts.rules).toEqual({ min: new Date(startsAt).getTime() });
  expect(byName.opens.type).toBe(T(7));
  expect(byName.featured.rules).toEqual({ default: true });
  expect(byName.accent.rules).toEqual({ default: "#336699" });
  expect(byName.authors.rules).toEqual({ module: authors.id });
  expect(byName.mainAuthor.rules).toEqual({ module: authors.id });
  expect(byName.body).toMatchObject({ type: T(12), localized: true, rules: { widget: "markdown" } });
  expect(byName.meta.rules).toEqual({ default: { a: 1 } });
  expect(byName.keywords.rules).toEqual({ default: ["x"] });
  expect(byName.greeting.rules).toEqual({ maxLength: 50 });
  expect(byName.clip.rules).toEqual({ mediaTypes: ["mp4"] });
  expect(byName.topics.rules).toEqual({ values: ["news", "sport"] });
  expect(byName.size.rules).toEqual({ values: ["S", "M", "L"], default: "M" });
  expect(byName.regions.rules).toEqual({ values: ["north", "south"] });
  expect(byName.state.rules).toEqual({ values: ["draft", "live"] });
  expect(byName.jingle.rules).toEqual({ mediaTypes: ["mp3"] });

  // The saved structure reads back into the editor.
  await page.reload();
  await expect(cards(page)).toHaveCount(21);
  await page.getByRole("button", { name: "Edit size" }).click();
  await expect(cards(page).nth(17).getByLabel("Option 3", { exact: true })).toHaveValue("L");
  await page.getByRole("button", { name: "Edit size" }).click(); // closes it again
  await page.getByRole("button", { name: "Edit price" }).click();
  await expect(page.getByRole("button", { name: "Edit price" })).toHaveAttribute("aria-expanded", "true");
  await page.setViewportSize({ width: 1280, height: 1500 });
  await page.mouse.move(0, 1499); // no tooltip in the picture
  await expect(page.getByRole("tooltip")).toHaveCount(0);
  await screenshot(page, "structure-editor");
});

/** moduleUrl: the module of the structure page open in the browser. */
async function moduleUrl(page: Page) {
  const [, app, module] = page.url().match(/\/apps\/([^/]+)\/modules\/([^/]+)\/structure/)!;
  return { app, module, api: `/api/generalcontent/module/${module}` };
}

test("the API's refusals are shown where they belong: a 400 at the field it names, a 409 with links to the items", async ({ page }) => {
  const admin = await Api.admin();
  const app = await admin.app();
  const m = await admin.module(app.id, unique("News"), [{ name: "title", type: T(1) }]);
  const item = await admin.item(m.id, "First", { title: "first" });

  await signIn(page, "admin", adminPassword);
  await page.goto(`/cms/apps/${app.id}/modules/${m.id}/structure`);
  await page.getByRole("button", { name: "Edit title" }).click();
  // A lookahead is a JavaScript regular expression but not RE2: the server refuses it.
  await page.getByLabel("Pattern", { exact: true }).fill("(?=f)[a-z]+");
  await page.getByRole("button", { name: "Save structure" }).click();
  const card = cards(page).first();
  await expect(card.getByRole("alert")).toContainText("pattern does not compile");
  await expect(card).toHaveAccessibleName(/^Field 1: title/);
  await expectAccessible(page, "a field the API refused");

  // A rule the existing item does not satisfy: a 409 naming the item.
  await page.getByLabel("Pattern", { exact: true }).fill("[A-Z][a-z]+");
  await page.getByRole("button", { name: "Save structure" }).click();
  const conflict = page.getByRole("alert").filter({ hasText: "existing items do not fit" });
  await expect(conflict).toContainText("does not match the new pattern");
  await expect(conflict.getByRole("link", { name: `Item ${item.id}` })).toHaveAttribute("href", `/cms/apps/${app.id}/items/${item.id}`);
  const still = await admin.call("GET", `/api/generalcontent/module/${m.id}`);
  expect(still.fields[0].rules).toEqual({});

  // A client-side check: an invalid regular expression is never sent.
  await page.getByLabel("Pattern", { exact: true }).fill("[a-");
  await expect(card.getByText(/Not a valid regular expression/)).toBeVisible();
  await page.getByRole("button", { name: "Save structure" }).click();
  await expect(page.getByText(/Fix the problem shown first/)).toBeVisible();
});

test("modules list: search, sort, rename with a warning, delete after typing the name", async ({ page }) => {
  const admin = await Api.admin();
  const app = await admin.app();
  const tag = unique("m");
  const names = [`Beta ${tag}`, `Alpha ${tag}`, `Gamma ${tag}`];
  const mods = [];
  for (const n of names) mods.push(await admin.module(app.id, n, [{ name: "title", type: T(1) }]));
  await admin.item(mods[0].id, "one", { title: "x" });

  await signIn(page, "admin", adminPassword);
  await page.goto(`/cms/apps/${app.id}/modules`);
  const rows = page.getByRole("row");
  await expect(rows).toHaveCount(4);
  // Last updated first, by default.
  await expect(rows.nth(1)).toContainText(`Gamma ${tag}`);
  await pick(page, page.getByRole("combobox", { name: "Sort modules" }), "Name, A to Z");
  await expect(rows.nth(1)).toContainText(`Alpha ${tag}`);
  await expect(rows.nth(3)).toContainText(`Gamma ${tag}`);
  await page.getByLabel("Search modules by name").fill("alp");
  await expect(rows).toHaveCount(2);
  await page.getByLabel("Search modules by name").fill("");
  await expect(rows).toHaveCount(4);
  await expectAccessible(page, "the modules list");
  await page.getByLabel("Search modules by name").blur();
  await screenshot(page, "modules");

  // Rename, warned that apps address modules by name.
  await page.getByRole("button", { name: `Rename Beta ${tag}` }).click();
  const rename = page.getByRole("dialog");
  await expect(rename).toContainText("Apps find modules by name");
  await rename.getByRole("textbox", { name: "New name" }).fill(`Delta ${tag}`);
  await expectAccessible(page, "the rename dialog");
  await rename.getByRole("button", { name: "Rename" }).click();
  await expect(page.getByText("Module renamed")).toBeVisible();
  await expect(page.getByRole("link", { name: `Delta ${tag}`, exact: true })).toBeVisible();
  const renamed = await admin.call("GET", `/api/generalcontent/module/${mods[0].id}`);
  expect(renamed.name).toBe(`Delta ${tag}`);
  expect(renamed.fields.map((f: any) => f.name)).toEqual(["title"]);

  // Delete: the button stays disabled until the name is typed.
  await page.getByRole("button", { name: `Delete Delta ${tag}` }).click();
  const del = page.getByRole("dialog");
  await expect(del).toContainText("Its items are deleted with it");
  const confirm = del.getByRole("button", { name: "Delete module and items" });
  await expect(confirm).toBeDisabled();
  await del.getByLabel(/Type the module's name/).fill("Delta");
  await expect(confirm).toBeDisabled();
  await del.getByLabel(/Type the module's name/).fill(`Delta ${tag}`);
  await expectAccessible(page, "the delete dialog");
  await confirm.click();
  await expect(page.getByText("Module deleted")).toBeVisible();
  await expect(rows).toHaveCount(3);
  await admin.call("GET", `/api/generalcontent/module/${mods[0].id}`, undefined, [404]);

  // Links: the items of a module and its structure.
  await expect(page.getByRole("link", { name: `Items of Alpha ${tag}` })).toHaveAttribute("href", `/cms/apps/${app.id}/modules/${mods[1].id}/items`);
  await page.getByRole("link", { name: `Structure of Alpha ${tag}` }).click();
  await expect(page.getByRole("heading", { name: `Structure of “Alpha ${tag}”` })).toBeVisible();
});

test("modules list: pages of twenty, kept in the address", async ({ page }) => {
  const admin = await Api.admin();
  const app = await admin.app();
  await Promise.all(Array.from({ length: 23 }, (_, i) => admin.module(app.id, `M${String(i).padStart(2, "0")}`, [])));
  await signIn(page, "admin", adminPassword);
  await page.goto(`/cms/apps/${app.id}/modules?sort=name-asc`);
  await expect(page.getByText("1–20 of 23")).toBeVisible();
  await expect(page.getByRole("row")).toHaveCount(21);
  await page.getByRole("button", { name: "Page 2" }).click();
  await expect(page.getByText("21–23 of 23")).toBeVisible();
  await expect(page.getByRole("row").nth(1)).toContainText("M20");
  await expect(page).toHaveURL(/page=2/);
  await page.reload();
  await expect(page.getByText("21–23 of 23")).toBeVisible();
});

test("a read-only user sees the modules, may change nothing, is told why, and the API refuses anyway", async ({ page }) => {
  const admin = await Api.admin();
  const app = await admin.app();
  const m = await admin.module(app.id, unique("Pages"), [{ name: "title", type: T(1) }]);
  const user = unique("reader");
  const u = await admin.user(user, "reader-password-1");
  await admin.grant(u.id, app.id, ["read"]);

  await signIn(page, user, "reader-password-1");
  await page.goto(`/cms/apps/${app.id}/modules`);
  await expect(page.getByRole("link", { name: m.name, exact: true })).toBeVisible();
  const create = page.getByRole("button", { name: "New module" });
  await expect(create).toBeDisabled();
  await create.hover();
  await expect(page.getByRole("tooltip").filter({ hasText: "You may not create modules in this app: it needs the “write” right" })).toBeVisible();
  await expect(page.getByRole("button", { name: `Rename ${m.name}` })).toBeDisabled();
  await expect(page.getByRole("button", { name: `Delete ${m.name}` })).toBeDisabled();
  await page.getByRole("button", { name: `Delete ${m.name}` }).hover();
  await expect(page.getByRole("tooltip").filter({ hasText: "it needs the “delete” right" })).toBeVisible();
  await page.getByRole("button", { name: `Delete ${m.name}` }).click({ force: true });
  await expect(page.getByRole("dialog")).toHaveCount(0);
  await expectAccessible(page, "the modules list, read only");

  await page.getByRole("link", { name: `Structure of ${m.name}` }).click();
  await expect(page.getByText("Read only")).toBeVisible();
  await expect(page.getByRole("button", { name: "Save structure" })).toBeDisabled();
  await expect(page.getByRole("button", { name: "Add field" })).toBeDisabled();
  await page.getByRole("button", { name: "Edit title" }).click();
  await expect(cards(page).first().getByRole("textbox", { name: "Name", exact: true })).toBeDisabled();
  await expectAccessible(page, "the structure editor, read only");

  const reader = await Api.signIn(user, "reader-password-1");
  const body = { name: m.name, fields: [{ name: "title", type: T(1) }, { name: "extra", type: T(2) }] };
  await reader.call("PUT", `/api/generalcontent/module/${m.id}`, body, [403]);
  await reader.call("DELETE", `/api/generalcontent/module/${m.id}`, undefined, [403]);
  await reader.call("POST", "/api/generalcontent/module", { app: app.id, name: unique("Nope") }, [403]);
});
