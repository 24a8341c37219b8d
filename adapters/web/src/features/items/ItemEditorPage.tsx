import { Title } from "@mantine/core";

// Placeholder: built by the content screens' work.
export function ItemEditorPage() {
  return <Title order={2}>ItemEditorPage</Title>;
}
