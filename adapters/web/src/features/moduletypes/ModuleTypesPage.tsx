import { Title } from "@mantine/core";

// Placeholder: built by the content screens' work.
export function ModuleTypesPage() {
  return <Title order={2}>ModuleTypesPage</Title>;
}
