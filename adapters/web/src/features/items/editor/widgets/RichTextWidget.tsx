// Rich text (and HTML): a WYSIWYG editor whose value is the HTML string.
// Loaded on demand (React.lazy), so the editor's code is not in the first
// load. The "html" widget adds a tab with the HTML source.
import { Input, SegmentedControl, Stack, Textarea } from "@mantine/core";
import { Link, RichTextEditor } from "@mantine/tiptap";
import "@mantine/tiptap/styles.css";
import { useEditor } from "@tiptap/react";
import StarterKit from "@tiptap/starter-kit";
import DOMPurify from "dompurify";
import { useEffect, useState } from "react";
import { orNull, str, type WidgetProps } from "./props";

export default function RichTextWidget(p: WidgetProps & { source: boolean }) {
  // An item's HTML is sanitised before the editor reads it: the editor's
  // schema drops scripts today, but a richer extension must not change that.
  const raw = str(p.value);
  const html = DOMPurify.sanitize(raw);
  const [mode, setMode] = useState<"rich" | "source">("rich");
  const editor = useEditor({
    extensions: [StarterKit.configure({ link: false }), Link],
    content: html,
    editable: !p.readOnly,
    immediatelyRender: true,
    shouldRerenderOnTransaction: false,
    editorProps: {
      attributes: {
        "aria-label": p.label,
        role: "textbox",
        "aria-multiline": "true",
        ...(p.readOnly ? { "aria-readonly": "true" } : {}),
      },
    },
    onUpdate: ({ editor }) => p.onChange(editor.isEmpty ? null : orNull(editor.getHTML())),
  });
  // Outside changes (a merge, a reload, the source tab) reach the editor.
  useEffect(() => {
    if (editor && !editor.isDestroyed && html !== editor.getHTML() && !(html === "" && editor.isEmpty)) {
      editor.commands.setContent(html, { emitUpdate: false });
    }
  }, [editor, html]);
  useEffect(() => {
    editor?.setEditable(!p.readOnly);
  }, [editor, p.readOnly]);

  return (
    <Input.Wrapper id={p.id} label={p.label} description={p.description} withAsterisk={p.required} error={p.error}>
      <Stack gap={6} mt={4}>
        {p.source && (
          <SegmentedControl
            size="xs"
            w="fit-content"
            aria-label={`${p.label}: view`}
            value={mode}
            onChange={(v) => setMode(v as "rich" | "source")}
            data={[
              { value: "rich", label: "Formatted" },
              { value: "source", label: "HTML source" },
            ]}
          />
        )}
        {mode === "source" ? (
          <Textarea
            aria-label={`${p.label} (HTML source)`}
            value={raw}
            onChange={(e) => p.onChange(orNull(e.currentTarget.value))}
            autosize
            minRows={6}
            styles={{ input: { fontFamily: "ui-monospace, monospace", fontSize: 13 } }}
            readOnly={p.readOnly}
            spellCheck={false}
          />
        ) : (
          <RichTextEditor editor={editor}>
            {!p.readOnly && (
              <RichTextEditor.Toolbar>
                <RichTextEditor.ControlsGroup>
                  <RichTextEditor.Bold />
                  <RichTextEditor.Italic />
                  <RichTextEditor.Strikethrough />
                  <RichTextEditor.Code />
                </RichTextEditor.ControlsGroup>
                <RichTextEditor.ControlsGroup>
                  <RichTextEditor.H2 />
                  <RichTextEditor.H3 />
                  <RichTextEditor.BulletList />
                  <RichTextEditor.OrderedList />
                  <RichTextEditor.Blockquote />
                </RichTextEditor.ControlsGroup>
                <RichTextEditor.ControlsGroup>
                  <RichTextEditor.Link />
                  <RichTextEditor.Unlink />
                </RichTextEditor.ControlsGroup>
                <RichTextEditor.ControlsGroup>
                  <RichTextEditor.Undo />
                  <RichTextEditor.Redo />
                </RichTextEditor.ControlsGroup>
              </RichTextEditor.Toolbar>
            )}
            <RichTextEditor.Content mih={120} />
          </RichTextEditor>
        )}
      </Stack>
    </Input.Wrapper>
  );
}
