import { Title } from "@mantine/core";

// Placeholder: built by the content screens' work.
export function HistoryPage() {
  return <Title order={2}>HistoryPage</Title>;
}
