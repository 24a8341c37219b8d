import { Text } from "@mantine/core";

/** Legend: a fieldset's legend that looks like an input's label. */
export function Legend({ label, required }: { label: string; required: boolean }) {
  return (
    <Text component="span" size="sm" fw={600}>
      {label}
      {required && (
        <Text component="span" c="red.8" aria-hidden>
          {" *"}
        </Text>
      )}
    </Text>
  );
}
