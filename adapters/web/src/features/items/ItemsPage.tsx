import { Title } from "@mantine/core";

// Placeholder: built by the content screens' work.
export function ItemsPage() {
  return <Title order={2}>ItemsPage</Title>;
}
