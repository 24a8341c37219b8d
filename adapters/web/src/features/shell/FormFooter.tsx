// FormFooter ends a dialog's form: Cancel, then the submit button that
// says what the form does.
import { Button, Group, type MantineColor } from "@mantine/core";
import type { ReactNode } from "react";

export function FormFooter(props: { onCancel: () => void; submit: ReactNode; loading?: boolean; disabled?: boolean; color?: MantineColor }) {
  return (
    <Group justify="flex-end">
      <Button variant="default" onClick={props.onCancel}>
        Cancel
      </Button>
      <Button type="submit" color={props.color} loading={props.loading} disabled={props.disabled}>
        {props.submit}
      </Button>
    </Group>
  );
}
