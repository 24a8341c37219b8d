import { notifications, type NotificationData } from "@mantine/notifications";

/** notify shows a toast whose close button is labelled (axe: button-name). */
export function notify(n: NotificationData) {
  notifications.show({ ...n, closeButtonProps: { "aria-label": "Close the message", ...n.closeButtonProps } });
}

/** warnStyles: an orange Alert's title in a colour that keeps its contrast. */
export const warnStyles = { title: { color: "#7a2e00" } };
