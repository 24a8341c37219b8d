// The item editor's screen: /apps/:appId/items/:itemId (an item) and
// /apps/:appId/modules/:moduleId/items/new (a new item of a module).
import { Alert } from "@mantine/core";
import { useParams } from "react-router";
import { describe } from "../../lib/errors";
import { PageLoader } from "../shell/PageLoader";
import { useItem, useModule } from "./editor/api";
import { Editor } from "./editor/Editor";

export function ItemEditorPage() {
  const { appId, itemId, moduleId } = useParams();
  const item = useItem(itemId);
  const module = useModule(itemId ? item.data?.module : moduleId);
  const failed = item.error ?? module.error;
  if (failed) {
    return (
      <Alert color="red" title={itemId ? "The item cannot be shown" : "The module cannot be shown"}>
        {describe(failed)}
      </Alert>
    );
  }
  if ((itemId && !item.data) || !module.data || !appId) return <PageLoader label="Loading the item" />;
  return <Editor key={itemId ?? `new-${moduleId}`} appId={appId} module={module.data} latest={item.data} />;
}
