// An item's history: its revisions with who and when, two of them side by
// side, and an earlier one restored.
import { Api, expect, expectAccessible, screenshot, signIn, test, unique } from "./fixtures";
import { adminPassword } from "../playwright.config";

const T = (n: number) => n.toString().padStart(24, "0");

test("history: every revision with who and when, a side-by-side diff, restore revision 0", async ({ page }) => {
  const admin = await Api.admin();
  const app = await admin.app();
  const mod = await admin.module(app.id, unique("Pages"), [
    { name: "title", type: T(1) },
    { name: "body", type: T(12) },
  ]);
  const item = await admin.item(mod.id, "About us", { title: "First title", body: "The quick brown fox jumps over the lazy dog." });

  await signIn(page, "admin", adminPassword);
  await page.goto(`/cms/apps/${app.id}/items/${item.id}`);
  await page.getByLabel("title").fill("Second title");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByText("Revision").locator("..")).toContainText("1");
  await page.getByLabel("body").fill("The quick red fox jumps over the sleepy dog.");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByRole("button", { name: "Save" })).toBeDisabled();

  await page.getByRole("link", { name: "History" }).click();
  await expect(page.getByRole("heading", { name: /History of “About us”/ })).toBeVisible();
  const rows = page.getByRole("table", { name: "Revisions", exact: true }).getByRole("row");
  await expect(rows).toHaveCount(4); // the header and three revisions
  await expect(rows.nth(1)).toContainText("Edited");
  await expect(rows.nth(1)).toContainText("Administrator");
  await expect(rows.nth(1)).toContainText("body");
  await expect(rows.nth(3)).toContainText("Created");
  await expect(rows.nth(3)).toContainText(String(new Date().getFullYear()));

  // Revision 0 against revision 2: both changed fields, old and new side by side.
  await page.getByRole("radio", { name: "Compare from revision 0" }).check();
  await page.getByRole("radio", { name: "Compare to revision 2" }).check();
  const diff = page.getByRole("table", { name: "Differences between the two revisions" });
  const title = diff.getByRole("row").filter({ hasText: "title" });
  await expect(title.getByRole("cell").nth(0)).toHaveText("First title");
  await expect(title.getByRole("cell").nth(1)).toHaveText("Second title");
  const body = diff.getByRole("row").filter({ hasText: "body" });
  await expect(body.locator("del")).toContainText(["brown", "lazy"]);
  await expect(body.locator("ins")).toContainText(["red", "sleepy"]);
  await expect(page.getByText("Saved", { exact: true })).toHaveCount(0); // the toasts gone, for the picture
  await expectAccessible(page, "the history page");
  await screenshot(page, "item-history");

  await page.getByRole("button", { name: "Restore revision 0" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Restore" }).click();
  await expect(page.getByText("Revision 0 restored")).toBeVisible();
  await expect(rows).toHaveCount(5);
  const got = await admin.call("GET", `/api/generalcontent/instance/${item.id}`);
  expect(got.values).toEqual({ title: "First title", body: "The quick brown fox jumps over the lazy dog." });
  expect(got.revision).toBe(3);
});
