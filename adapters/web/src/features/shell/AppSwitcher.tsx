import { Select } from "@mantine/core";
import { useNavigate } from "react-router";
import { useApps } from "../access/hooks";

const lastAppKey = "halocms.lastApp"; // an app id, not a secret

/** useCurrentApp: the app in the URL, else the one used last. */
export function useCurrentApp(fromUrl: string | undefined): string | undefined {
  if (fromUrl) {
    localStorage.setItem(lastAppKey, fromUrl);
    return fromUrl;
  }
  return localStorage.getItem(lastAppKey) ?? undefined;
}

/** AppSwitcher lists the apps the user may see (the API filters them). */
export function AppSwitcher({ current }: { current: string | undefined }) {
  const apps = useApps();
  const navigate = useNavigate();
  const data = (apps.data ?? []).map((a) => ({ value: a.id, label: a.name }));
  return (
    <Select
      // A searchable Select shows nothing for a value set before its
      // options arrive: mount it again when they do.
      key={data.length}
      aria-label="App"
      placeholder={apps.isLoading ? "Loading apps…" : data.length ? "Choose an app" : "No apps"}
      data={data}
      value={data.some((d) => d.value === current) ? current : null}
      onChange={(id) => id && navigate(`/apps/${id}/modules`)}
      searchable={data.length > 8}
      allowDeselect={false}
      w={{ base: 150, sm: 240 }}
      size="sm"
    />
  );
}
