// A word diff of two long texts (the `diff` package, loaded with this
// chunk only when the history shows one): removed words struck through
// on the left, added words underlined on the right.
import { Text } from "@mantine/core";
import { diffLines, diffWords } from "diff";

export default function TextDiff({ a, b, side }: { a: string; b: string; side: "old" | "new" }) {
  const parts = a.length + b.length > 20_000 ? diffLines(a, b) : diffWords(a, b);
  return (
    <Text size="sm" component="div" style={{ whiteSpace: "pre-wrap", overflowWrap: "anywhere" }}>
      {parts.map((p, i) => {
        if (p.added && side === "old") return null;
        if (p.removed && side === "new") return null;
        if (p.added)
          return (
            <ins key={i} style={{ background: "var(--mantine-color-green-1)", color: "#0b4a1c" }}>
              {p.value}
            </ins>
          );
        if (p.removed)
          return (
            <del key={i} style={{ background: "var(--mantine-color-red-1)", color: "#7a1010" }}>
              {p.value}
            </del>
          );
        return <span key={i}>{p.value}</span>;
      })}
    </Text>
  );
}
