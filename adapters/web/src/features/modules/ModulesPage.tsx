import { Title } from "@mantine/core";

// Placeholder: built by the content screens' work.
export function ModulesPage() {
  return <Title order={2}>ModulesPage</Title>;
}
