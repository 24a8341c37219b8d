// The items of a module: state filter, search and the filter builder,
// sort, pagination, column choice, bulk actions, rights, preview as the app.
import type { Page } from "@playwright/test";
import { Api, expect, expectAccessible, screenshot, signIn, test, unique } from "./fixtures";
import { adminPassword } from "../playwright.config";

const type = (n: number) => n.toString().padStart(24, "0");
const hour = 3_600_000;
const day = 24 * hour;

const fields = [
  { name: "title", type: type(1) },
  { name: "price", type: type(2) },
  { name: "featured", type: type(8) },
  { name: "category", type: type(20), rules: { values: ["books", "music", "games"] } },
  { name: "body", type: type(12) },
];

interface Seed {
  name: string;
  values?: Record<string, unknown>;
  publishedAt?: number;
  removedAt?: number;
  archivedAt?: number;
}

/** A module of typed fields in a fresh app, with items created in one batch. */
async function moduleWith(admin: Api, seeds: Seed[]) {
  const app = await admin.app(unique("shop"));
  const mod = await admin.module(app.id, "Products", fields);
  const res = await admin.call("POST", "/api/generalcontent/instance/batch", {
    created: seeds.map((s) => ({ module: mod.id, values: {}, ...s })),
  });
  expect(res.results.total.failure, JSON.stringify(res.operations)).toBe(0);
  const ids: Record<string, string> = {};
  for (const op of res.operations) ids[op.data.name] = op.data.id;
  return { app, mod, ids, url: `/cms/apps/${app.id}/modules/${mod.id}/items` };
}

function states(now = Date.now()): Seed[] {
  return [
    { name: "Alpha published", values: { title: "Atlas of clouds", price: 5, category: "books", featured: true }, publishedAt: now - day },
    { name: "Bravo concept", values: { title: "Blue notes", price: 15, category: "music", featured: false } },
    { name: "Charlie concept", values: { title: "Chess openings", price: 25, category: "games", featured: true } },
    { name: "Delta scheduled", values: { title: "Dune, new edition", price: 35, category: "books", featured: true }, publishedAt: now + 2 * hour },
    { name: "Echo expired", values: { title: "Echoes (winter sale)", price: 45, category: "music" }, publishedAt: now - 2 * day, removedAt: now - day },
    { name: "Foxtrot archived", values: { title: "Foxtrot lessons", price: 55, category: "music", featured: false }, publishedAt: now - 2 * day, archivedAt: now - hour },
  ];
}

const table = (page: Page) => page.getByRole("table", { name: "Items" });
/** The names in the table's rows, in order. */
const rowNames = (page: Page) => table(page).locator("tbody tr td:nth-child(2)");

async function chooseState(page: Page, label: string) {
  await page.getByRole("radiogroup", { name: "State" }).getByText(label, { exact: true }).click();
}

async function pick(page: Page, label: string, option: string) {
  await page.getByRole("combobox", { name: label, exact: true }).click();
  await page.getByRole("option", { name: option, exact: true }).click();
}

test("the state filter shows each state's items, with a badge per row", async ({ page }) => {
  const admin = await Api.admin();
  const { url, ids } = await moduleWith(admin, states());
  await admin.call("DELETE", `/api/generalcontent/instance/${ids["Charlie concept"]}`);
  await signIn(page, "admin", adminPassword);
  await page.goto(url);

  await expect(rowNames(page)).toHaveCount(5);
  const row = (name: string) => table(page).getByRole("row").filter({ hasText: name });
  await expect(row("Alpha published")).toContainText("Published");
  await expect(row("Bravo concept")).toContainText("Concept");
  await expect(row("Delta scheduled")).toContainText("Scheduled");
  await expect(row("Echo expired")).toContainText("Expired");
  await expect(row("Foxtrot archived")).toContainText("Archived");
  await expectAccessible(page, "the items list");
  await screenshot(page, "items-list");
  // Usable at tablet width: every state and the main actions are in view.
  await page.setViewportSize({ width: 768, height: 800 });
  await expect(page.getByRole("radiogroup", { name: "State" }).getByText("Deleted")).toBeInViewport();
  await expect(page.getByRole("button", { name: "New item" })).toBeInViewport();
  await page.setViewportSize({ width: 1280, height: 800 });

  const expectRows = async (state: string, names: string[]) => {
    await chooseState(page, state);
    await expect(page).toHaveURL(new RegExp(`state=${state.toLowerCase()}`));
    await expect(rowNames(page)).toHaveText(names);
  };
  await expectRows("Published", ["Alpha published"]);
  await expectRows("Concept", ["Bravo concept"]);
  await expectRows("Scheduled", ["Delta scheduled"]);
  await expectRows("Expired", ["Echo expired"]);
  await expectRows("Archived", ["Foxtrot archived"]);
  await expectRows("Deleted", ["Charlie concept"]);
  await expect(row("Charlie concept")).toContainText("Deleted");

  // The state is in the URL: a reload shows the same list.
  await page.reload();
  await expect(rowNames(page)).toHaveText(["Charlie concept"]);
});

test("quick search and the filter builder (a number and a choice, or-ed)", async ({ page }) => {
  const admin = await Api.admin();
  const { url } = await moduleWith(admin, states());
  await signIn(page, "admin", adminPassword);
  await page.goto(url + "?sort=name+asc");
  await expect(rowNames(page)).toHaveCount(6);

  await page.getByLabel("Search by name").fill("concept");
  await expect(rowNames(page)).toHaveText(["Bravo concept", "Charlie concept"]);
  await expect(page).toHaveURL(/q=concept/);
  await page.getByLabel("Search by name").fill("");
  await expect(rowNames(page)).toHaveCount(6);

  // price > 40 or category = books
  await page.getByRole("button", { name: "Filter" }).click();
  await page.getByRole("button", { name: "Add condition" }).click();
  await pick(page, "Field of condition 1", "price");
  await pick(page, "Operator of condition 1", "is greater than");
  await page.getByLabel("Value of condition 1").fill("40");
  await page.getByRole("button", { name: "Add condition" }).click();
  await pick(page, "Field of condition 2", "category");
  await pick(page, "Operator of condition 2", "is");
  await pick(page, "Value of condition 2", "books");
  await page.getByRole("radiogroup", { name: "match" }).getByText("any of").click();
  await page.getByRole("button", { name: "Apply filter" }).click();
  await expect(rowNames(page)).toHaveText(["Alpha published", "Delta scheduled", "Echo expired", "Foxtrot archived"]);
  await expectAccessible(page, "the items list with the filter builder open");
  await screenshot(page, "items-filter");

  // "all of" narrows it to the books over 30.
  await page.getByRole("radiogroup", { name: "match" }).getByText("all of").click();
  await page.getByLabel("Value of condition 1").fill("30");
  await page.getByRole("button", { name: "Apply filter" }).click();
  await expect(rowNames(page)).toHaveText(["Delta scheduled"]);

  // The filter is in the URL.
  await page.reload();
  await expect(rowNames(page)).toHaveText(["Delta scheduled"]);
  await expect(page.getByRole("button", { name: /Filter/ })).toContainText("2");

  // HALO's search ANDs attribute and field conditions: "any of" cannot mix them, and says so.
  await page.getByRole("button", { name: /Filter/ }).click();
  await page.getByRole("button", { name: "Add condition" }).click();
  await pick(page, "Field of condition 3", "Name");
  await page.getByLabel("Value of condition 3").fill("Alpha");
  await page.getByRole("radiogroup", { name: "match" }).getByText("any of").click();
  await expect(page.getByRole("alert")).toContainText("cannot mix item attributes");
  await expect(page.getByRole("button", { name: "Apply filter" })).toBeDisabled();
});

test("sort by a field column, ascending then descending", async ({ page }) => {
  const admin = await Api.admin();
  const { url } = await moduleWith(admin, states());
  await signIn(page, "admin", adminPassword);
  await page.goto(url);
  await page.getByRole("button", { name: "Sort by price" }).click();
  await expect(rowNames(page).first()).toHaveText("Alpha published");
  await expect(table(page).getByRole("columnheader", { name: /price/ })).toHaveAttribute("aria-sort", "ascending");
  await page.getByRole("button", { name: "Sort by price, descending" }).click();
  await expect(rowNames(page).first()).toHaveText("Foxtrot archived");
  await expect(rowNames(page).last()).toHaveText("Alpha published");
  await expect(page).toHaveURL(/sort=values.price\+desc/);
});

test("pagination: 25 items, 10 a page", async ({ page }) => {
  const admin = await Api.admin();
  const seeds = Array.from({ length: 25 }, (_, i) => ({ name: `Item ${String(i + 1).padStart(2, "0")}`, values: { price: i } }));
  const { url } = await moduleWith(admin, seeds);
  await signIn(page, "admin", adminPassword);
  await page.goto(url + "?sort=name+asc");
  await expect(page.getByText("1–20 of 25")).toBeVisible();
  await pick(page, "Items per page", "10 per page");
  await expect(page.getByText("1–10 of 25")).toBeVisible();
  await expect(rowNames(page)).toHaveCount(10);
  await page.getByRole("button", { name: "Next page" }).click();
  await expect(page.getByText("11–20 of 25")).toBeVisible();
  await expect(rowNames(page).first()).toHaveText("Item 11");
  await page.getByRole("button", { name: "Page 3" }).click();
  await expect(page.getByText("21–25 of 25")).toBeVisible();
  await expect(rowNames(page)).toHaveCount(5);
  await page.reload();
  await expect(rowNames(page).first()).toHaveText("Item 21");
  await page.getByRole("button", { name: "Previous page" }).click();
  await expect(page.getByText("11–20 of 25")).toBeVisible();
});

test("column choice hides and shows a column, and survives a reload", async ({ page }) => {
  const admin = await Api.admin();
  const { url } = await moduleWith(admin, states());
  await signIn(page, "admin", adminPassword);
  await page.goto(url);
  const header = (name: string) => table(page).getByRole("columnheader", { name });
  await expect(header("Sort by price")).toBeVisible();
  await page.getByRole("button", { name: "Columns" }).click();
  await page.getByRole("checkbox", { name: "price" }).uncheck();
  await page.getByRole("checkbox", { name: "Created by" }).check();
  await page.keyboard.press("Escape");
  await expect(header("Sort by price")).toHaveCount(0);
  await expect(header("Sort by Created by")).toBeVisible();
  await page.reload();
  await expect(header("Sort by Created by")).toBeVisible();
  await expect(header("Sort by price")).toHaveCount(0);
  await page.getByRole("button", { name: "Columns" }).click();
  await page.getByRole("checkbox", { name: "price" }).check();
  await expect(header("Sort by price")).toBeVisible();
});

test("bulk publish of two concepts, then bulk delete after a confirmation", async ({ page }) => {
  const admin = await Api.admin();
  const { url } = await moduleWith(admin, states());
  await signIn(page, "admin", adminPassword);
  await page.goto(url + "?state=concept&sort=name+asc");
  await expect(rowNames(page)).toHaveCount(2);
  await page.getByRole("checkbox", { name: "Select all items on this page" }).check();
  const bulk = page.getByRole("region", { name: "Bulk actions" });
  await expect(bulk).toContainText("2 selected");
  await bulk.getByRole("button", { name: "Publish", exact: true }).click();
  await expect(page.getByText("Published 2 items.")).toBeVisible();
  await expect(rowNames(page)).toHaveCount(0);
  await chooseState(page, "Published");
  await expect(rowNames(page)).toHaveText(["Alpha published", "Bravo concept", "Charlie concept"]);

  await page.getByRole("checkbox", { name: "Select Bravo concept" }).check();
  await page.getByRole("checkbox", { name: "Select Charlie concept" }).check();
  await bulk.getByRole("button", { name: "Delete", exact: true }).click();
  const dialog = page.getByRole("dialog", { name: "Delete 2 items?" });
  await expect(dialog).toBeVisible();
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await expect(rowNames(page)).toHaveCount(3);
  await bulk.getByRole("button", { name: "Delete", exact: true }).click();
  await dialog.getByRole("button", { name: "Delete 2 items" }).click();
  await expect(page.getByText("Deleted 2 items.")).toBeVisible();
  await expect(rowNames(page)).toHaveText(["Alpha published"]);
  await chooseState(page, "Deleted");
  await expect(rowNames(page)).toHaveCount(2);
});

test("a read-only user has no bulk actions nor New item, and the API refuses them", async ({ page }) => {
  const admin = await Api.admin();
  const { app, url, ids } = await moduleWith(admin, states());
  const name = unique("reader");
  const user = await admin.user(name, "reader-password-1");
  await admin.grant(user.id, app.id, ["read"]);
  await signIn(page, name, "reader-password-1");
  await page.goto(url);
  await expect(rowNames(page)).toHaveCount(6);
  await expect(page.getByRole("button", { name: "New item" })).toBeDisabled();
  await page.getByRole("checkbox", { name: "Select Bravo concept" }).check();
  const bulk = page.getByRole("region", { name: "Bulk actions" });
  for (const action of ["Publish", "Unpublish", "Delete"]) await expect(bulk.getByRole("button", { name: action, exact: true })).toBeDisabled();
  await bulk.getByRole("button", { name: "Publish", exact: true }).hover();
  await expect(page.getByRole("tooltip")).toContainText("update");

  const reader = await Api.signIn(name, "reader-password-1");
  await reader.call("POST", `/api/generalcontent/instance/${ids["Bravo concept"]}/publish`, {}, [403]);
});

test("preview as the app: now, and at a future moment the scheduled item appears", async ({ page }) => {
  const admin = await Api.admin();
  const { url } = await moduleWith(admin, states());
  await signIn(page, "admin", adminPassword);
  await page.goto(url);
  await expect(rowNames(page)).toHaveCount(6);
  await page.getByRole("switch", { name: "Preview as the app" }).click();
  await expect(page.getByRole("switch", { name: "Preview as the app" })).toBeChecked();
  await expect(page.getByRole("status").filter({ hasText: "Preview: what the app sees now" })).toBeVisible();
  await expect(rowNames(page)).toHaveText(["Alpha published"]);

  await page.getByRole("button", { name: "Preview moment" }).click();
  await page.getByRole("button", { name: "Tomorrow" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Preview: what the app sees on" })).toBeVisible();
  await page.getByRole("button", { name: "Sort by name" }).click();
  await expect(rowNames(page)).toHaveText(["Alpha published", "Delta scheduled"]);
  await expect(table(page).getByRole("row").filter({ hasText: "Delta scheduled" })).toContainText("Published");
  await page.getByRole("heading", { name: "Products" }).click();
  await expectAccessible(page, "the items list previewed as the app");
  await screenshot(page, "items-preview");

  await page.getByRole("button", { name: "Leave preview" }).click();
  await expect(rowNames(page)).toHaveCount(6);

  // A moment in the past, from a shared link: expiries and archiving not reached yet apply.
  await page.goto(`${url}?sort=name+asc&preview=${Date.now() - 36 * hour}`);
  await expect(page.getByRole("status").filter({ hasText: "Preview: what the app sees on" })).toBeVisible();
  await expect(rowNames(page)).toHaveText(["Echo expired", "Foxtrot archived"]);
});

test("live: an item another user creates, then publishes, appears in a second browser's list without a reload", async ({ browser }) => {
  const admin = await Api.admin();
  const { app, mod, url } = await moduleWith(admin, states());
  const password = "live-items-password";
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
  await b.goto(url + "?sort=name+asc");
  await expect(rowNames(b)).toHaveCount(6);
  await expect(b.getByRole("button", { name: "Live updates: connected" })).toBeVisible();
  await b.evaluate(() => ((window as unknown as { marker: number }).marker = 1));

  // Created by the writer (through the API): it appears, as a concept.
  const api = await Api.signIn(writerName, password);
  await api.item(mod.id, "Zulu new", { title: "Fresh", price: 1 });
  await expect(rowNames(b)).toHaveCount(7);
  await expect(table(b).getByRole("row").filter({ hasText: "Zulu new" })).toContainText("Concept");

  // Published by the writer in the first browser: the watcher's Published list gains it.
  await chooseState(b, "Published");
  await expect(rowNames(b)).toHaveText(["Alpha published"]);
  await a.goto(url + "?state=concept");
  await a.getByRole("checkbox", { name: "Select Zulu new" }).check();
  await a.getByRole("region", { name: "Bulk actions" }).getByRole("button", { name: "Publish", exact: true }).click();
  await expect(a.getByText("Published 1 item.")).toBeVisible();
  await expect(rowNames(b)).toHaveText(["Alpha published", "Zulu new"]);
  expect(await b.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(1); // no reload

  await first.close();
  await second.close();
});
