// Actions the user may not take stay visible but disabled, with a tooltip
// saying why. They are aria-disabled (not disabled) so they still take
// focus and hover, which is how the tooltip is reached.
import { ActionIcon, Button, Tooltip, type ActionIconProps, type ButtonProps } from "@mantine/core";
import type { MouseEvent, ReactNode } from "react";
import { notifications } from "@mantine/notifications";
import { Link } from "react-router";

interface Common {
  /** Why the action is refused; undefined when it is allowed. */
  refused?: string;
  onClick?: () => void;
  /** A route to go to instead of onClick. */
  to?: string;
  label: string;
  id?: string;
}

function guard(refused: string | undefined, onClick?: () => void) {
  return (e: MouseEvent) => {
    if (refused) {
      e.preventDefault();
      return;
    }
    onClick?.();
  };
}

/** GuardedButton: a Button, disabled with an explanation when refused. */
export function GuardedButton({ refused, onClick, to, label, children, ...rest }: Common & ButtonProps & { children?: ReactNode }) {
  const link = to && !refused ? { component: Link, to } : {};
  const button = (
    <Button
      {...rest}
      {...(link as object)}
      aria-disabled={refused ? true : undefined}
      data-disabled={refused ? true : undefined}
      onClick={guard(refused, onClick)}
    >
      {children ?? label}
    </Button>
  );
  return refused ? (
    <Tooltip label={refused} multiline w={280} withArrow>
      {button}
    </Tooltip>
  ) : (
    button
  );
}

/** GuardedIcon: an icon button named by label, with the label (or why not) as its tooltip. */
export function GuardedIcon({ refused, onClick, to, label, children, ...rest }: Common & ActionIconProps & { children: ReactNode }) {
  const link = to && !refused ? { component: Link, to } : {};
  return (
    <Tooltip label={refused ? `${label}: ${refused}` : label} multiline={!!refused} w={refused ? 280 : undefined} withArrow>
      <ActionIcon
        variant="subtle"
        {...rest}
        {...(link as object)}
        aria-label={label}
        aria-disabled={refused ? true : undefined}
        data-disabled={refused ? true : undefined}
        onClick={guard(refused, onClick)}
      >
        {children}
      </ActionIcon>
    </Tooltip>
  );
}

/** toast shows an outcome; its text keeps its contrast (Mantine greys a titled message). */
export function toast(color: "green" | "red", title: string, message: string) {
  notifications.show({
    color,
    title,
    message,
  });
}
