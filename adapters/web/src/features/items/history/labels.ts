import type { Schemas } from "../../../api/client";

export const eventLabel: Record<Schemas["Revision"]["type"], string> = {
  "content.item_created": "Created",
  "content.item_edited": "Edited",
  "content.item_reverted": "Restored an earlier revision",
  "content.item_published": "Published",
  "content.item_unpublished": "Unpublished",
  "content.item_expiry_set": "Expiry set",
  "content.item_archived": "Archived",
  "content.item_unarchived": "Unarchived",
  "content.item_deleted": "Deleted",
  "content.item_restored": "Restored",
};

/** changedLabel: "values.title" → "title". */
export const changedLabel = (c: string) => c.replace(/^values\./, "");
