// The item editor: a module with fields of every type, an item made by
// filling every widget, read back through the API; checks shown at their
// field (the client's and the API's); publishing.
import { Api, expect, expectAccessible, screenshot, signIn, test, unique } from "./fixtures";
import { adminPassword } from "../playwright.config";
import type { Page } from "@playwright/test";

const T = (n: number) => n.toString().padStart(24, "0");

async function everyTypeModule(admin: Api, app: string, target: string) {
  return admin.module(app, unique("Articles"), [
    { name: "title", type: T(1), required: true, rules: { maxLength: 20 } },
    { name: "summary", type: T(12) },
    { name: "body", type: T(12), rules: { widget: "richtext" } },
    { name: "notes", type: T(12), rules: { widget: "markdown" } },
    { name: "price", type: T(2), rules: { min: 0 } },
    { name: "featured", type: T(8) },
    { name: "starts", type: T(6) },
    { name: "day", type: T(6), rules: { widget: "date" } },
    { name: "opens", type: T(7) },
    { name: "category", type: T(20), rules: { values: ["news", "sport"] } },
    { name: "flavours", type: T(19), rules: { values: ["apple", "berry", "cherry"] } },
    { name: "size", type: T(18), rules: { values: ["S", "M", "L"] } },
    { name: "extras", type: T(17), rules: { values: ["wifi", "pool"] } },
    { name: "colour", type: T(9) },
    { name: "place", type: T(13), rules: { widget: "location" } },
    { name: "author", type: T(11), rules: { module: target } },
    { name: "related", type: T(10), rules: { module: target } },
    { name: "steps", type: T(14) },
    { name: "keywords", type: T(14), rules: { widget: "tags" } },
    { name: "meta", type: T(13) },
    { name: "cover", type: T(5) },
    { name: "clip", type: T(16) },
    { name: "sound", type: T(21) },
    { name: "doc", type: T(3), rules: { widget: "document" } },
    { name: "video", type: T(4) },
    { name: "greeting", type: T(15) },
  ]);
}

/** field: the input (not the option list) labelled label. */
const field = (page: Page, label: string) => page.getByLabel(label).and(page.locator("input, textarea"));

async function pick(page: Page, label: string, option: string) {
  await field(page, label).click();
  await page.getByRole("option", { name: option, exact: true }).click();
}

async function chooseZone(page: Page, zone: string) {
  await field(page, "Time zone").click();
  await field(page, "Time zone").fill(zone);
  await page.getByRole("option", { name: zone, exact: true }).click();
}

test("an item of every field type: filled widget by widget, saved, read back through the API", async ({ page }) => {
  const admin = await Api.admin();
  const app = await admin.app();
  const authors = await admin.module(app.id, unique("Authors"), [{ name: "bio", type: T(1) }]);
  const ada = await admin.item(authors.id, "Ada Lovelace", { bio: "first programmer" });
  const alan = await admin.item(authors.id, "Alan Turing", { bio: "computing" });
  const mod = await everyTypeModule(admin, app.id, authors.id);

  await signIn(page, "admin", adminPassword);
  await page.goto(`/cms/apps/${app.id}/modules/${mod.id}/items/new`);
  await expect(page.getByRole("heading", { name: "New item" })).toBeVisible();
  await chooseZone(page, "UTC");

  await field(page, "Name").fill("Launch day");
  await field(page, "title").fill("Hello world");
  await expect(page.getByText("11 / 20 characters")).toBeVisible();
  await field(page, "summary").fill("A short summary.");
  await page.getByRole("textbox", { name: "body" }).click();
  await page.keyboard.type("Rich text body");
  await field(page, "notes").fill("# Notes\n\nSome *markdown*.");
  await page.getByRole("tab", { name: "Preview" }).click();
  await expect(page.getByRole("heading", { name: "Notes" })).toBeVisible();
  await page.getByRole("tab", { name: "Write" }).click();
  await field(page, "price").pressSequentially("-12.5"); // typed key by key: "-", "-1", "-12.", …
  await expect(field(page, "price")).toHaveAccessibleDescription(/at least 0/);
  await field(page, "price").fill("12.5");
  await field(page, "featured").check();
  await field(page, "starts").fill("2030-05-01T10:30");
  await field(page, "day").fill("2030-05-02");
  await field(page, "opens").fill("09:15");
  await pick(page, "category", "sport");
  await pick(page, "flavours", "apple");
  await page.getByRole("option", { name: "cherry", exact: true }).click();
  await page.keyboard.press("Escape");
  await page.getByRole("radio", { name: "M", exact: true }).check();
  await page.getByRole("checkbox", { name: "pool", exact: true }).check();
  await field(page, "colour").fill("#1a2b3c");
  await field(page, "place: latitude").fill("52.37");
  await field(page, "place: longitude").fill("4.89");
  await page.getByRole("combobox", { name: "author" }).click();
  await page.getByRole("combobox", { name: "author" }).fill("Ada");
  await page.getByRole("option", { name: "Ada Lovelace" }).click();
  await page.getByRole("combobox", { name: "related" }).click();
  await page.getByRole("combobox", { name: "related" }).fill("Ala");
  await page.getByRole("option", { name: "Alan Turing" }).click();
  await field(page, "New entry of steps").fill("one");
  await field(page, "New entry of steps").press("Enter");
  await field(page, "New entry of steps").fill("two");
  await field(page, "New entry of steps").press("Enter");
  await page.getByRole("button", { name: "Move entry 2 up" }).click();
  await field(page, "keywords").fill("red");
  await field(page, "keywords").press("Enter");
  await field(page, "keywords").fill("blue");
  await field(page, "keywords").press("Enter");
  await field(page, "meta").fill('{"a": 1}');
  await field(page, "cover").fill("https://example.com/cover.png");
  await field(page, "clip").fill("https://example.com/clip.mp4");
  await field(page, "sound").fill("https://example.com/sound.mp3");
  await field(page, "doc").fill("https://example.com/doc.pdf");
  await field(page, "video").fill("https://youtu.be/dQw4w9WgXcQ");
  await field(page, "Add a locale").fill("fr");
  await page.getByRole("button", { name: "Add the locale" }).click();
  await field(page, "greeting (en-US)").fill("Hello");
  await field(page, "greeting (fr)").fill("Bonjour");

  await expectAccessible(page, "the item editor");
  await page.getByRole("button", { name: "Create" }).click();
  await expect(page).toHaveURL(/\/items\/[0-9a-f]{24}$/);
  await expect(page.getByRole("heading", { name: "Launch day" })).toBeVisible();
  await expect(page.getByText("State: Concept").first()).toBeVisible();

  const id = page.url().split("/").pop()!;
  const item = await admin.call("GET", `/api/generalcontent/instance/${id}`);
  expect(item.name).toBe("Launch day");
  expect(item.values).toEqual({
    title: "Hello world",
    summary: "A short summary.",
    body: "<p>Rich text body</p>",
    notes: "# Notes\n\nSome *markdown*.",
    price: 12.5,
    featured: true,
    starts: Date.UTC(2030, 4, 1, 10, 30),
    day: Date.UTC(2030, 4, 2),
    opens: Date.UTC(1970, 0, 1, 9, 15),
    category: "sport",
    flavours: ["apple", "cherry"],
    size: "M",
    extras: ["pool"],
    colour: "#1a2b3c",
    place: { lat: 52.37, lng: 4.89 },
    author: ada.id,
    related: [alan.id],
    steps: ["two", "one"],
    keywords: ["red", "blue"],
    meta: { a: 1 },
    cover: "https://example.com/cover.png",
    clip: "https://example.com/clip.mp4",
    sound: "https://example.com/sound.mp3",
    doc: "https://example.com/doc.pdf",
    video: "https://youtu.be/dQw4w9WgXcQ",
    greeting: { "en-US": "Hello", fr: "Bonjour" },
  });
  // The relation picker shows names, not ids.
  await expect(page.locator('[data-key="values.author"]').getByText("Ada Lovelace")).toBeVisible();
  await expectAccessible(page, "the item editor of a saved item");
  await screenshot(page, "item-editor");
});

test("checks at the field: the client's (too long) and the API's (a relation to an item deleted meanwhile)", async ({ page }) => {
  const admin = await Api.admin();
  const app = await admin.app();
  const authors = await admin.module(app.id, unique("Authors"), [{ name: "bio", type: T(1) }]);
  const ada = await admin.item(authors.id, "Ada Lovelace", {});
  const mod = await admin.module(app.id, unique("Posts"), [
    { name: "title", type: T(1), required: true, rules: { maxLength: 10 } },
    { name: "author", type: T(11), rules: { module: authors.id } },
  ]);
  await signIn(page, "admin", adminPassword);
  await page.goto(`/cms/apps/${app.id}/modules/${mod.id}/items/new`);
  await page.getByLabel("Name").fill("Checked");

  // Required, at save.
  await page.getByRole("button", { name: "Create" }).click();
  await expect(page.getByLabel("title")).toHaveAccessibleDescription(/A value is required/);
  // Too long, as it is typed.
  await page.getByLabel("title").fill("far too long a title");
  await expect(page.getByLabel("title")).toHaveAccessibleDescription(/at most 10 characters/);
  await page.getByRole("button", { name: "Create" }).click();
  await expect(page).toHaveURL(/\/items\/new$/);
  await page.getByLabel("title").fill("Short");
  await expect(page.getByLabel("title")).not.toHaveAccessibleDescription(/at most/);

  // A relation the client cannot know is wrong: its item is deleted before the save.
  await page.getByRole("combobox", { name: "author" }).click();
  await page.getByRole("combobox", { name: "author" }).fill("Ada");
  await page.getByRole("option", { name: "Ada Lovelace" }).click();
  await admin.call("DELETE", `/api/generalcontent/instance/${ada.id}`);
  await page.getByRole("button", { name: "Create" }).click();
  await expect(page.getByRole("combobox", { name: "author" })).toHaveAccessibleDescription(/does not exist/);
  await expect(page.getByRole("combobox", { name: "author" })).toBeInViewport();
});

test("publishing: publish now, schedule, unpublish, expiry, archive, delete and restore", async ({ page }) => {
  const admin = await Api.admin();
  const app = await admin.app();
  const mod = await admin.module(app.id, unique("News"), [{ name: "title", type: T(1) }]);
  const item = await admin.item(mod.id, "Road works", { title: "Road works" });
  await page.setViewportSize({ width: 768, height: 1000 }); // tablet width: the panel goes under the form
  await signIn(page, "admin", adminPassword);
  await page.goto(`/cms/apps/${app.id}/items/${item.id}`);
  const state = (s: string) => expect(page.getByText(`State: ${s}`).first()).toBeVisible();
  await state("Concept");

  await page.getByRole("button", { name: "Publish now" }).click();
  await state("Published");

  await page.getByRole("button", { name: "Schedule publication…" }).click();
  const dialog = page.getByRole("dialog", { name: "Schedule publication" });
  await dialog.getByLabel("Publish at").fill("2031-01-02T08:00");
  await dialog.getByRole("button", { name: "Schedule" }).click();
  await state("Scheduled");
  let got = await admin.call("GET", `/api/generalcontent/instance/${item.id}`);
  expect(got.publishedAt).toBeGreaterThan(Date.now());

  await page.getByRole("button", { name: "Schedule expiry…" }).click();
  const exp = page.getByRole("dialog", { name: "Schedule expiry" });
  await exp.getByLabel("Expire at").fill("2032-01-02T08:00");
  await exp.getByRole("button", { name: "Set expiry" }).click();
  await expect(page.getByRole("button", { name: "Remove expiry" })).toBeVisible();
  got = await admin.call("GET", `/api/generalcontent/instance/${item.id}`);
  expect(got.removedAt).toBeGreaterThan(got.publishedAt);

  await page.getByRole("button", { name: "Unpublish" }).click();
  await state("Concept");
  await page.getByRole("button", { name: "Archive" }).click();
  await state("Archived");
  await page.getByRole("button", { name: "Unarchive" }).click();
  await state("Concept");

  await page.getByRole("button", { name: "Delete…" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
  await state("Deleted");
  await expect(page.getByLabel("title")).not.toBeEditable();
  await page.getByRole("button", { name: "Restore" }).click();
  await state("Concept");
  got = await admin.call("GET", `/api/generalcontent/instance/${item.id}`);
  expect(got.deletedAt).toBeNull();
  expect(got.archivedAt).toBeNull();
});
