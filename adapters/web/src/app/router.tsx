// The CMS's routes, under /cms/. Each feature's screens load on demand,
// so the first load carries only the shell and the sign-in page.
import { Navigate, createBrowserRouter } from "react-router";
import { RequireSession } from "../features/auth/RequireSession";
import { Shell } from "../features/shell/Shell";
import { Home } from "../features/shell/Home";
import { NotFound } from "../features/shell/NotFound";

export const router = createBrowserRouter(
  [
    {
      path: "/sign-in",
      lazy: () => import("../features/auth/SignInPage").then((m) => ({ Component: m.SignInPage })),
    },
    {
      path: "/",
      element: (
        <RequireSession>
          <Shell />
        </RequireSession>
      ),
      children: [
        { index: true, element: <Home /> },
        {
          path: "apps/:appId",
          children: [
            { index: true, element: <Navigate to="modules" replace /> },
            {
              path: "modules",
              lazy: () => import("../features/modules/ModulesPage").then((m) => ({ Component: m.ModulesPage })),
            },
            {
              path: "modules/:moduleId/structure",
              lazy: () => import("../features/modules/StructurePage").then((m) => ({ Component: m.StructurePage })),
            },
            {
              path: "modules/:moduleId/items",
              lazy: () => import("../features/items/ItemsPage").then((m) => ({ Component: m.ItemsPage })),
              // Starts the list's requests while the screen's code loads; never waited for.
              loader: ({ params, request }) => {
                void import("../features/items/list/prefetch")
                  .then((m) => m.prefetchItemsList(params.moduleId!, new URL(request.url).searchParams))
                  .catch(() => {});
                return null;
              },
            },
            {
              path: "modules/:moduleId/items/new",
              lazy: () => import("../features/items/ItemEditorPage").then((m) => ({ Component: m.ItemEditorPage })),
            },
            {
              path: "items/:itemId",
              lazy: () => import("../features/items/ItemEditorPage").then((m) => ({ Component: m.ItemEditorPage })),
            },
            {
              path: "activity",
              lazy: () => import("../features/activity/ActivityPage").then((m) => ({ Component: m.ActivityPage })),
            },
            {
              path: "media",
              lazy: () => import("../features/media/MediaPage").then((m) => ({ Component: m.MediaPage })),
            },
            {
              path: "items/:itemId/history",
              lazy: () => import("../features/items/HistoryPage").then((m) => ({ Component: m.HistoryPage })),
            },
          ],
        },
        {
          path: "module-types",
          lazy: () => import("../features/moduletypes/ModuleTypesPage").then((m) => ({ Component: m.ModuleTypesPage })),
        },
        { path: "*", element: <NotFound /> },
      ],
    },
  ],
  { basename: "/cms" },
);
