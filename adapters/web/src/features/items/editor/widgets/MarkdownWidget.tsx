// Markdown: a plain textarea, and a preview tab rendered with marked and
// sanitized with DOMPurify, both loaded on demand.
import { Alert, Box, Loader, Stack, Tabs, Text, Textarea } from "@mantine/core";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Counter } from "./TextWidgets";
import { orNull, str, type WidgetProps } from "./props";

async function render(md: string): Promise<string> {
  const [{ marked }, { default: DOMPurify }] = await Promise.all([import("marked"), import("dompurify")]);
  return DOMPurify.sanitize(await marked.parse(md, { gfm: true }));
}

export function MarkdownWidget(p: WidgetProps) {
  const md = str(p.value);
  const [tab, setTab] = useState<string | null>("write");
  const preview = useQuery({ queryKey: ["markdown-preview", md], queryFn: () => render(md), enabled: tab === "preview", staleTime: Infinity });
  return (
    <Stack gap={4}>
      <Tabs value={tab} onChange={setTab} keepMounted={false}>
        <Tabs.List aria-label={`${p.label}: write or preview`}>
          <Tabs.Tab value="write">Write</Tabs.Tab>
          <Tabs.Tab value="preview">Preview</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="write" pt={6}>
          <Textarea
            id={p.id}
            label={p.label}
            description={p.description ?? "Markdown"}
            withAsterisk={p.required}
            value={md}
            onChange={(e) => p.onChange(orNull(e.currentTarget.value))}
            autosize
            minRows={5}
            maxRows={20}
            styles={{ input: { fontFamily: "ui-monospace, monospace", fontSize: 13 } }}
            error={p.error}
            readOnly={p.readOnly}
          />
        </Tabs.Panel>
        <Tabs.Panel value="preview" pt={6}>
          <Text size="sm" fw={500}>
            {p.label} (preview)
          </Text>
          {preview.isPending ? (
            <Loader size="sm" aria-label="Rendering the preview" />
          ) : preview.isError ? (
            <Alert color="red">The preview failed.</Alert>
          ) : (
            <Box
              className="markdown-preview"
              p="sm"
              bd="1px solid var(--mantine-color-gray-4)"
              style={{ borderRadius: 4, minHeight: 80 }}
              dangerouslySetInnerHTML={{ __html: preview.data ?? "" }}
            />
          )}
          {p.error && (
            <Text size="xs" c="red.8" role="alert">
              {p.error}
            </Text>
          )}
        </Tabs.Panel>
      </Tabs>
      <Counter value={md} field={p.field} />
    </Stack>
  );
}
