import { Title } from "@mantine/core";

// Placeholder: built by the content screens' work.
export function StructurePage() {
  return <Title order={2}>StructurePage</Title>;
}
