// Module types: created from a module's fields, exported, deleted,
// imported back, and used to start a module.
import { readFile } from "node:fs/promises";
import { Api, expect, expectAccessible, screenshot, signIn, test, unique } from "./fixtures";
import { adminPassword } from "../playwright.config";

const T = (n: number) => n.toString().padStart(24, "0");

test("module types: create from a module, export, delete, import the export back, start a module from it", async ({ page }) => {
  const admin = await Api.admin();
  const app = await admin.app(unique("Types app"));
  const source = await admin.module(app.id, unique("Recipe"), [
    { name: "title", type: T(1), required: true, rules: { maxLength: 90 } },
    { name: "course", type: T(20), rules: { values: ["starter", "main", "dessert"] } },
  ]);
  const typeName = unique("Recipe type");

  await signIn(page, "admin", adminPassword);
  await page.goto(`/cms/apps/${app.id}/modules`); // makes it the current app
  await page.getByRole("link", { name: "Module types" }).click();
  await expect(page.getByRole("heading", { name: "Module types" })).toBeVisible();

  // Create from the module's fields.
  await page.getByRole("button", { name: "New from a module" }).click();
  const dialog = page.getByRole("dialog");
  // The current app is chosen already.
  await expect(dialog.getByRole("combobox", { name: "App" })).toHaveValue(app.name);
  const module = dialog.getByRole("combobox", { name: "Module" });
  await module.click();
  await page.locator(`[id="${await module.getAttribute("aria-controls")}"]`).getByRole("option", { name: `${source.name} (2 fields)` }).click();
  await dialog.getByRole("textbox", { name: "Name of the module type" }).fill(typeName);
  await dialog.getByRole("button", { name: "Create module type" }).click();
  await expect(page.getByText("Module type created")).toBeVisible();
  const row = page.getByRole("row").filter({ hasText: typeName });
  await expect(row).toContainText("title: Text");
  await expect(row).toContainText("course: Single select dropdown");
  await expectAccessible(page, "the module types screen");
  // The message closes itself after 4 s, which the accessibility check may outlast on a busy
  // machine: close it if it is still there, and see it gone before the screenshot.
  await page.getByRole("button", { name: "Close the message" }).click({ timeout: 1_000 }).catch(() => {});
  await expect(page.getByText("Module type created")).toBeHidden();
  await screenshot(page, "module-types");

  const types = await admin.call("GET", "/api/core/moduletype");
  const created = types.find((t: any) => t.name === typeName);
  expect(created.fields.map((f: any) => [f.name, f.rules])).toEqual([
    ["title", { maxLength: 90 }],
    ["course", { values: ["starter", "main", "dessert"] }],
  ]);

  // Export it.
  const downloading = page.waitForEvent("download");
  await row.getByRole("button", { name: `Export ${typeName}` }).click();
  const download = await downloading;
  expect(download.suggestedFilename()).toBe(`moduletype-${created.id}.json`);
  const file = await download.path();
  const doc = JSON.parse(await readFile(file, "utf8"));
  expect(doc.version).toBe(1);
  expect(doc.moduleTypes.map((t: any) => t.id)).toEqual([created.id]);

  // Delete it, after a confirmation.
  await row.getByRole("button", { name: `Delete ${typeName}` }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Delete module type" }).click();
  await expect(page.getByText("Module type deleted")).toBeVisible();
  await expect(row).toHaveCount(0);

  // Import the export: the type is back under its id.
  const choosing = page.waitForEvent("filechooser");
  await page.getByRole("button", { name: "Import" }).click();
  await (await choosing).setFiles(file);
  const confirm = page.getByRole("dialog", { name: "Import 1 module type(s)?" });
  await expect(confirm).toContainText(typeName);
  await confirm.getByRole("button", { name: "Import" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "Imported 1 module type(s)" })).toContainText(`${typeName}: 2 field(s)`);
  await expect(row).toBeVisible();
  const again = await admin.call("GET", "/api/core/moduletype");
  const back = again.find((t: any) => t.id === created.id);
  expect(back.name).toBe(typeName);
  expect(back.fields.map((f: any) => [f.name, f.type, f.required, f.rules])).toEqual(created.fields.map((f: any) => [f.name, f.type, f.required, f.rules]));

  // A new module from the type, in the current app.
  await row.getByRole("link", { name: `New module from ${typeName}` }).click();
  const create = page.getByRole("dialog", { name: "New module" });
  await expect(create.getByRole("combobox", { name: "Start from a module type" })).toHaveValue(typeName);
  const moduleName = unique("Desserts");
  await create.getByRole("textbox", { name: "Name", exact: true }).fill(moduleName);
  await create.getByRole("button", { name: "Create module" }).click();
  await expect(page.getByRole("heading", { name: `Structure of “${moduleName}”` })).toBeVisible();
  await expect(page.getByRole("region", { name: /^Field \d+:/ })).toHaveCount(2);
  const modules = await admin.call("GET", `/api/generalcontent/module?app=${app.id}&skip=true&withFields=true`);
  const made = modules.find((m: any) => m.name === moduleName);
  expect(made.moduleType).toBe(created.id);
  expect(made.fields.map((f: any) => f.name)).toEqual(["title", "course"]);

  // Export all: a document with every module type.
  await page.goto("/cms/module-types");
  const all = page.waitForEvent("download");
  await page.getByRole("button", { name: "Export all" }).click();
  expect((await all).suggestedFilename()).toBe("moduletypes.json");
});

test("module types: an editor reads and exports them, and may not create, import or delete", async ({ page }) => {
  const admin = await Api.admin();
  const app = await admin.app();
  const typeName = unique("Shared type");
  await admin.call("POST", "/api/core/moduletype", { name: typeName, fields: [{ name: "title", type: T(1) }] });
  const user = unique("editor");
  const u = await admin.user(user, "editor-password-1");
  await admin.grant(u.id, app.id, ["read", "write", "update"]);

  await signIn(page, user, "editor-password-1");
  await page.goto(`/cms/apps/${app.id}/modules`); // the current app
  await page.getByRole("link", { name: "Module types" }).click();
  const row = page.getByRole("row").filter({ hasText: typeName });
  await expect(row).toBeVisible();
  await expect(page.getByRole("button", { name: "New from a module" })).toBeDisabled();
  await expect(page.getByRole("button", { name: "Import" })).toBeDisabled();
  await expect(row.getByRole("button", { name: `Delete ${typeName}` })).toBeDisabled();
  await page.getByRole("button", { name: "Import" }).hover();
  await expect(page.getByRole("tooltip").filter({ hasText: "Only administrators may import module types." })).toBeVisible();
  await expectAccessible(page, "the module types screen, for an editor");
  const downloading = page.waitForEvent("download");
  await row.getByRole("button", { name: `Export ${typeName}` }).click();
  expect((await downloading).suggestedFilename()).toMatch(/^moduletype-.+\.json$/);

  const editor = await Api.signIn(user, "editor-password-1");
  await editor.call("POST", "/api/core/moduletype", { name: unique("Nope"), fields: [] }, [403]);
  await editor.call("POST", "/api/core/moduletype/import", { version: 1, moduleTypes: [] }, [403]);
});
