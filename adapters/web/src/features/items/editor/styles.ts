/** warnStyles: an orange Alert's title in a colour that keeps its contrast. */
export const warnStyles = { title: { color: "#7a2e00" } };
