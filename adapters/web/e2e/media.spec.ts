// The media library: uploads by drag and drop with progress, the grid and
// list, a file's details (metadata, transform preview), the picker in the
// item editor, "used in", delete refused while used and forced, and
// rights (the UI hides what the API refuses).
import type { Page } from "@playwright/test";
import { Api, expect, expectAccessible, screenshot, signIn, test, unique } from "./fixtures";
import { adminPassword } from "../playwright.config";

const T = (n: number) => n.toString().padStart(24, "0");

/** png draws a picture (800×600 unless told) in the browser and answers its PNG bytes. */
async function png(page: Page, colour = "#3b82f6", w = 800, h = 600): Promise<Buffer> {
  const url = await page.evaluate(
    ([c, w, h]) => {
      const canvas = document.createElement("canvas");
      canvas.width = w;
      canvas.height = h;
      const g = canvas.getContext("2d")!;
      g.fillStyle = c;
      g.fillRect(0, 0, w, h);
      g.fillStyle = "#ffffff";
      g.fillRect(w / 4, h / 4, w / 2, h / 2);
      return canvas.toDataURL("image/png");
    },
    [colour, w, h] as const,
  );
  return Buffer.from(url.split(",")[1], "base64");
}

const zip = Buffer.from("504b0304140000000800000000000000000000000000000000000500000068656c6c6f", "hex");

/** upload stores a file through the API (multipart), as the set-up of a test. */
async function upload(api: Api, app: string, name: string, bytes: Buffer, extra: { folder?: string; tags?: string } = {}, want = [201]) {
  const res = await api.ctx.post("/api/media/file", {
    headers: { Authorization: `Bearer ${api.token}` },
    multipart: { app, ...extra, file: { name, mimeType: "application/octet-stream", buffer: bytes } },
  });
  const text = await res.text();
  expect(want, `upload ${name}: ${res.status()} ${text}`).toContain(res.status());
  return JSON.parse(text || "{}");
}

const files = (page: Page) => page.getByRole("list", { name: "Files" });
const card = (page: Page, name: string) => files(page).getByRole("listitem").filter({ hasText: name });

test("the library: drop files to upload them (progress, a refusal in the API's words), grid and list, folders, details and a transform preview", async ({ page }) => {
  const admin = await Api.admin();
  const app = await admin.app(unique("Media app"));
  await signIn(page, "admin", adminPassword);
  const picture = await png(page);
  await upload(admin, app.id, "tom.png", await png(page, "#e11d48"), { folder: "pets/cats", tags: "cats" });

  await page.goto(`/cms/apps/${app.id}/modules`);
  await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Media" }).click();
  await expect(page.getByRole("heading", { name: "Media" })).toBeVisible();
  await page.mouse.move(640, 10); // off the navigation: a hovered entry is not what the scan is about
  await expect(card(page, "tom.png")).toBeVisible();
  await expect(page.getByRole("navigation", { name: "Folders" }).getByRole("button", { name: /cats/ })).toBeVisible();

  // Drop a picture and a file of a type not allowed (a zip archive).
  await page.locator('input[type="file"]').setInputFiles([
    { name: "sky.png", mimeType: "image/png", buffer: picture },
    { name: "bundle.zip", mimeType: "application/zip", buffer: zip },
  ]);
  const uploads = page.getByRole("list", { name: "Uploads" });
  await expect(uploads.getByText("Uploaded", { exact: true })).toBeVisible();
  await expect(uploads.getByRole("progressbar", { name: "Uploading sky.png" })).toHaveAttribute("aria-valuenow", "100");
  const refused = uploads.getByRole("alert").filter({ hasText: "bundle.zip was not uploaded" });
  await expect(refused).toBeVisible();
  await expect(refused).not.toHaveText(/^bundle.zip was not uploaded$/); // the API's reason follows
  await expect(card(page, "sky.png")).toBeVisible();
  await expect.poll(() => card(page, "sky.png").locator("img").evaluate((img: HTMLImageElement) => img.naturalWidth)).toBeGreaterThan(0);
  await expect(page.getByText("2 files")).toBeVisible();
  await expectAccessible(page, "the media library");
  await screenshot(page, "media-library");

  // Filters live in the address: the folder, then the kind and a search.
  await page.getByRole("navigation", { name: "Folders" }).getByRole("button", { name: /cats/ }).click();
  await expect(page).toHaveURL(/folder=pets%2Fcats/);
  await expect(card(page, "tom.png")).toBeVisible();
  await expect(card(page, "sky.png")).toHaveCount(0);
  // A new folder inside it takes the uploads that follow.
  await page.getByRole("button", { name: "New folder…" }).click();
  await page.getByLabel("Folder name").fill("kittens");
  await page.getByRole("button", { name: "Open the new folder" }).click();
  await expect(page).toHaveURL(/folder=pets%2Fcats%2Fkittens/);
  await expect(page.getByText("The library is empty.").or(page.getByText("No files match."))).toBeVisible();
  await page.locator('input[type="file"]').setInputFiles({ name: "kitten.png", mimeType: "image/png", buffer: await png(page, "#a855f7") });
  await expect(card(page, "kitten.png")).toBeVisible();
  const inFolder = await admin.call("GET", `/api/media/file?app=${app.id}&folder=${encodeURIComponent("pets/cats/kittens")}`);
  expect(inFolder.items.map((f: { name: string }) => f.name)).toEqual(["kitten.png"]);
  await page.getByRole("navigation", { name: "Folders" }).getByRole("button", { name: "All files" }).click();
  await page.getByLabel("Uploaded by me").click(); // checked once the address says so
  await expect(page.getByLabel("Uploaded by me")).toBeChecked();
  await expect(page).toHaveURL(/by=/);
  await expect(card(page, "kitten.png")).toBeVisible();
  await page.getByLabel("Search by name").fill("sky");
  await expect(page).toHaveURL(/q=sky/);
  await expect(card(page, "tom.png")).toHaveCount(0);
  await page.getByRole("radiogroup", { name: "View" }).getByText("List").click();
  await expect(page).toHaveURL(/view=list/);
  const row = page.getByRole("table", { name: "Files" }).getByRole("row").filter({ hasText: "sky.png" });
  await expect(row.getByRole("cell")).toHaveText(["", "sky.png", "Image", /\d+(\.\d)? KB|\d+ B/, "0", /.+/]);
  await page.reload();
  await expect(row).toBeVisible();

  // Details: the metadata form and the transform preview.
  await row.getByRole("button", { name: "sky.png" }).click();
  const drawer = page.getByRole("dialog", { name: "sky.png" });
  await expect(drawer.getByText("800 × 600 px", { exact: true })).toBeVisible();
  await drawer.getByLabel("Tags").fill("sky");
  await drawer.getByLabel("Tags").press("Enter");
  await drawer.getByLabel("New locale").fill("en");
  await drawer.getByRole("button", { name: "Add the locale" }).click();
  await drawer.getByLabel("Alt text (en)").fill("A blue sky");
  await drawer.getByRole("button", { name: "Save details" }).click();
  await expect(page.getByText("The details of “sky.png” are saved.")).toBeVisible();
  const id = new URL(page.url()).searchParams.get("file")!;
  const saved = await admin.call("GET", `/api/media/file/${id}`);
  expect(saved.alt).toEqual({ en: "A blue sky" });
  expect(saved.tags).toEqual(["sky"]);

  const preview = drawer.getByRole("region", { name: "Transform preview" });
  await preview.getByLabel("Width", { exact: true }).and(page.locator("input")).click();
  await page.getByRole("option", { name: "200 px" }).click();
  const derived = preview.getByTestId("derived-image");
  await expect(derived).toHaveAttribute("src", /[?&]w=200/);
  await expect.poll(() => derived.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(200);
  await expect(preview.getByText("Derived image: 200 × 150 px")).toBeVisible();
  // The API signs the address: any transform (both sides stretched here) is made for whoever holds it.
  await expect(preview.getByLabel("Address of the derived image")).toHaveValue(/^https?:\/\/.+\/media\/.+\?(?=.*\bw=200\b)(?=.*\bfm=webp\b)(?=.*\bsig=)/);
  await preview.getByLabel("Height", { exact: true }).and(page.locator("input")).click();
  await page.getByRole("option", { name: "200 px" }).click();
  await preview.getByLabel("Fit", { exact: true }).and(page.locator("input")).click();
  await page.getByRole("option", { name: "Fill (stretch)" }).click();
  await expect(preview.getByText("Derived image: 200 × 200 px")).toBeVisible();
  const cropped = await preview.getByLabel("Address of the derived image").inputValue();
  expect((await page.request.get(cropped)).status()).toBe(200);
  expect((await page.request.get(cropped.replace(/sig=[^&]+/, "sig=forged"))).status()).toBe(403);
  await expectAccessible(page, "a media file's details");
  await screenshot(page, "media-detail");
});

test("the picker in the item editor, used in, and delete refused while used then forced", async ({ page }) => {
  const admin = await Api.admin();
  const app = await admin.app(unique("Media app"));
  const mod = await admin.module(app.id, unique("Posters"), [{ name: "cover", type: T(5) }]);
  const item = await admin.item(mod.id, "Summer poster", {});
  await signIn(page, "admin", adminPassword);
  const file = await upload(admin, app.id, "summer.png", await png(page, "#f59e0b"));
  await upload(admin, app.id, "winter.png", await png(page, "#0ea5e9"));

  await page.goto(`/cms/apps/${app.id}/items/${item.id}`);
  await page.getByRole("button", { name: "Choose from library: cover" }).click();
  const picker = page.getByRole("dialog", { name: /Choose from the library/ });
  await expect(picker.getByRole("button", { name: "Use summer.png" })).toBeVisible();
  await expect(picker.getByRole("button", { name: "Use winter.png" })).toBeVisible();
  // Upload in place: the new file is offered at once.
  await picker.locator('input[type="file"]').setInputFiles({ name: "autumn.png", mimeType: "image/png", buffer: await png(page, "#b45309") });
  await expect(picker.getByRole("button", { name: "Use autumn.png" })).toBeVisible();
  await expectAccessible(page, "the media picker");
  await screenshot(page, "media-picker");
  await picker.getByLabel("Search by name").fill("summ");
  await expect(picker.getByRole("button", { name: "Use winter.png" })).toHaveCount(0);
  await picker.getByRole("button", { name: "Use summer.png" }).click();
  await expect(picker).toBeHidden();
  const cover = page.getByLabel("cover").and(page.locator("input"));
  const url = new URL(file.url, page.url()).href;
  await expect(cover).toHaveValue(url);
  const thumb = page.getByRole("img", { name: "Preview of cover" });
  await expect(thumb).toHaveAttribute("src", /\/media\/.+\?preset=small$/);
  await expect.poll(() => thumb.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(400);
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await expect.poll(async () => (await admin.call("GET", `/api/generalcontent/instance/${item.id}`)).values.cover).toBe(url);

  // Used in: the file names the item, linked to its editor.
  await expect.poll(async () => (await admin.call("GET", `/api/media/file/${file.id}`)).uses).toBe(1);
  await page.goto(`/cms/apps/${app.id}/media?file=${file.id}`);
  const drawer = page.getByRole("dialog", { name: "summer.png" });
  const usedIn = drawer.getByRole("list", { name: "Used in" });
  await expect(usedIn.getByRole("link", { name: "Summer poster" })).toHaveAttribute("href", `/cms/apps/${app.id}/items/${item.id}`);

  // Replace: new bytes of the same kind keep the address; another kind is refused in the API's words.
  const choose = async (name: string, buffer: Buffer) => {
    const chooser = page.waitForEvent("filechooser");
    await drawer.getByRole("button", { name: "Replace…" }).click();
    await (await chooser).setFiles({ name, mimeType: "application/octet-stream", buffer });
  };
  await choose("summer-small.png", await png(page, "#f59e0b", 400, 300));
  await expect(drawer.getByText("400 × 300 px", { exact: true })).toBeVisible();
  await expect
    .poll(async () => {
      const f = await admin.call("GET", `/api/media/file/${file.id}`);
      return [f.version, f.url, f.width];
    })
    .toEqual([2, file.url, 400]);
  await choose("summer.zip", zip);
  await expect(drawer.getByRole("alert").filter({ hasText: "Not replaced" })).toContainText(/.{10,}/);
  expect((await admin.call("GET", `/api/media/file/${file.id}`)).version).toBe(2);

  // Delete is refused while the item uses it, naming the item; "Delete anyway" deletes it.
  await drawer.getByRole("button", { name: "Delete…" }).click();
  const confirm = page.getByRole("dialog", { name: "Delete “summer.png”?" });
  await confirm.getByRole("button", { name: "Delete", exact: true }).click();
  await expect(confirm.getByText("This file is in use")).toBeVisible();
  await expect(confirm.getByRole("list", { name: "Uses of the file" }).getByRole("link", { name: "Summer poster" })).toBeVisible();
  await admin.call("GET", `/api/media/file/${file.id}`, undefined, [200]);
  await expectAccessible(page, "delete refused while used");
  await confirm.getByRole("button", { name: "Delete anyway" }).click();
  await expect(page.getByText("“summer.png” is deleted.")).toBeVisible();
  await expect(drawer).toBeHidden();
  await expect(card(page, "winter.png")).toBeVisible();
  await expect(card(page, "summer.png")).toHaveCount(0);
  await admin.call("GET", `/api/media/file/${file.id}`, undefined, [404]);
});

test("rights: a reader sees no upload, edit or delete and the API refuses them; a user without read is told why", async ({ page }) => {
  const admin = await Api.admin();
  const app = await admin.app(unique("Media app"));
  const other = await admin.app(unique("Other app"));
  const name = unique("reader");
  const password = "a long enough password";
  const u = await admin.user(name, password);
  await admin.grant(u.id, app.id, ["read"]);
  await signIn(page, name, password);
  const file = await upload(admin, app.id, "read-only.png", await png(page));

  await page.goto(`/cms/apps/${app.id}/media`);
  await expect(card(page, "read-only.png")).toBeVisible();
  await expect(page.getByRole("button", { name: "Upload" })).toHaveCount(0);
  await expect(page.locator('input[type="file"]')).toHaveCount(0);
  await card(page, "read-only.png").getByRole("button", { name: "read-only.png" }).click();
  const drawer = page.getByRole("dialog", { name: "read-only.png" });
  await expect(drawer.getByLabel("Name", { exact: true })).toHaveAttribute("readonly", "");
  await expect(drawer.getByRole("button", { name: "Save details" })).toHaveCount(0);
  await expect(drawer.getByRole("button", { name: "Delete…" })).toHaveCount(0);
  await expect(drawer.getByRole("button", { name: "Replace…" })).toHaveCount(0);
  await expectAccessible(page, "a file's details, read only");

  const reader = await Api.signIn(name, password);
  await upload(reader, app.id, "mine.png", await png(page), {}, [403]);
  await reader.call("PATCH", `/api/media/file/${file.id}`, { name: "renamed.png" }, [403]);
  await reader.call("DELETE", `/api/media/file/${file.id}`, undefined, [403]);

  await page.goto(`/cms/apps/${other.id}/media`);
  await expect(page.getByText(/You may not read this app: it needs the “read” right/)).toBeVisible();
  await expect(page.getByRole("list", { name: "Files" })).toHaveCount(0);
  await reader.call("GET", `/api/media/file?app=${other.id}`, undefined, [403]);
});

/** wav: one second of silence, 8 kHz, 8-bit mono. */
function wav(): Buffer {
  const n = 8000;
  const b = Buffer.alloc(44 + n, 128);
  b.write("RIFF", 0);
  b.writeUInt32LE(36 + n, 4);
  b.write("WAVEfmt ", 8);
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20); // PCM
  b.writeUInt16LE(1, 22); // mono
  b.writeUInt32LE(8000, 24);
  b.writeUInt32LE(8000, 28);
  b.writeUInt16LE(1, 32);
  b.writeUInt16LE(8, 34);
  b.write("data", 36);
  b.writeUInt32LE(n, 40);
  return b;
}

const pdf = Buffer.from(
  "%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n" +
    "3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n",
);

test("kinds: audio and a PDF show their kind's icon, a player and a frame; the kind filter keeps to one kind", async ({ page }) => {
  const admin = await Api.admin();
  const app = await admin.app(unique("Media app"));
  await signIn(page, "admin", adminPassword);
  await upload(admin, app.id, "silence.wav", wav());
  await upload(admin, app.id, "leaflet.pdf", pdf);
  await upload(admin, app.id, "photo.png", await png(page));

  await page.goto(`/cms/apps/${app.id}/media`);
  await expect(files(page).getByRole("listitem")).toHaveCount(3);
  await expect(card(page, "silence.wav")).toContainText("Audio");
  await expect(card(page, "silence.wav").locator("img")).toHaveCount(0); // the kind's icon, no thumbnail
  await expect(card(page, "leaflet.pdf")).toContainText("Document");

  await page.getByLabel("Kind", { exact: true }).and(page.locator("input")).click();
  await page.getByRole("option", { name: "Audio" }).click();
  await expect(page).toHaveURL(/kind=audio/);
  await expect(files(page).getByRole("listitem")).toHaveCount(1);
  await card(page, "silence.wav").getByRole("button", { name: "silence.wav" }).click();
  const drawer = page.getByRole("dialog", { name: "silence.wav" });
  await expect(drawer.locator("audio[controls]")).toHaveAttribute("src", /\/media\/.+silence\.wav$/);
  await expect(drawer.getByRole("region", { name: "Transform preview" })).toHaveCount(0);
  await drawer.getByRole("button", { name: "Close the file's details" }).click();

  await page.getByLabel("Kind", { exact: true }).and(page.locator("input")).click();
  await page.getByRole("option", { name: "Documents" }).click();
  await card(page, "leaflet.pdf").getByRole("button", { name: "leaflet.pdf" }).click();
  const doc = page.getByRole("dialog", { name: "leaflet.pdf" });
  await expect(doc.locator("iframe[title='Preview of leaflet.pdf']")).toHaveAttribute("src", /\/media\/.+leaflet\.pdf$/);
  await expect(doc.getByRole("link", { name: "Download or open the file" })).toBeVisible();
  await expectAccessible(page, "a document's details");
});
