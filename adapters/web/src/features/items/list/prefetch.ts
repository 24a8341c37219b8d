// The items list's data, asked for as soon as the router knows where it
// is going (its loader), not once the screen has rendered: the session,
// then the module, then the first page, each as soon as it can start.
// The keys are the ones the screen's own queries use, so it finds them
// answered or on their way.
import { queryClient } from "../../../app/queryClient";
import * as session from "../../../auth/session";
import { moduleQuery } from "../../modules/api";
import { shownColumns, valueFields } from "./columns";
import { parseListParams } from "./listParams";
import { propsOf } from "./props";
import { itemsPageQuery } from "./queries";

export async function prefetchItemsList(moduleId: string, search: URLSearchParams): Promise<void> {
  if (!(await session.ready())) return; // the screen sends the user to sign in
  const module = await queryClient.fetchQuery(moduleQuery(moduleId));
  const props = propsOf(module);
  const fields = valueFields(shownColumns(props, null, moduleId));
  await queryClient.prefetchQuery(itemsPageQuery(moduleId, parseListParams(search), new Map(props.map((p) => [p.key, p])), fields));
}
