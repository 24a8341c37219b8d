// MediaPicker: the library in a dialog, for a content field. It lists the
// app's files of the field's kind (search, grid or list, pages), uploads
// in place with the library's uploader, and "Use" hands back the file's
// address, which the field then holds.
import { Alert, Group, Modal, SegmentedControl, Stack, Text } from "@mantine/core";
import { useState } from "react";
import { describe } from "../../../lib/errors";
import { useRights } from "../../access/hooks";
import { can, whyNot } from "../../access/rights";
import { Warning } from "../../modules/components/ModuleDialogs";
import { PageLoader } from "../../shell/PageLoader";
import { PageNav } from "../../shell/PageNav";
import { useMediaList, type MediaFile, type MediaKind, type MediaQuery } from "../api";
import { kinds } from "../format";
import { MediaGrid, MediaTable } from "../MediaGrid";
import { SearchInput } from "../Toolbar";
import { Uploader } from "../Uploader";

export interface MediaPickerProps {
  app: string;
  /** Only files of this kind. */
  kind: MediaKind;
  opened: boolean;
  onClose: () => void;
  onPick: (file: MediaFile) => void;
  /** Names the field in the title. */
  label: string;
}

export default function MediaPicker(props: MediaPickerProps) {
  const kindName = kinds.find((k) => k.value === props.kind)?.plural.toLowerCase() ?? "files";
  return (
    <Modal opened={props.opened} onClose={props.onClose} size="90rem" title={`Choose from the library: ${props.label}`}>
      {props.opened && <Picker {...props} kindName={kindName} />}
    </Modal>
  );
}

function Picker({ app, kind, onPick, onClose, kindName }: MediaPickerProps & { kindName: string }) {
  const rights = useRights();
  const mayRead = can(rights, "read", { app });
  const mayWrite = can(rights, "write", { app });
  const [q, setQ] = useState("");
  const [page, setPage] = useState(1);
  const [view, setView] = useState<"grid" | "list">("grid");
  const query: MediaQuery = { q, kind, tags: [], folder: null, uploadedBy: "", sort: "uploaded_desc", page, limit: 18 };
  const list = useMediaList(app, query, mayRead);
  const pages = Math.max(1, list.data?.pagination.totalPages ?? 1);
  const use = (f: MediaFile) => {
    onPick(f);
    onClose();
  };

  if (!rights) return <PageLoader />;
  if (!mayRead) return <Warning title="Not available">{whyNot("read", { app })}</Warning>;
  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <SearchInput
          value={q}
          onChange={(v) => {
            setQ(v);
            setPage(1);
          }}
        />
        <SegmentedControl
          aria-label="View"
          value={view}
          onChange={(v) => setView(v as "grid" | "list")}
          data={[
            { value: "grid", label: "Grid" },
            { value: "list", label: "List" },
          ]}
        />
      </Group>
      {mayWrite && <Uploader app={app} folder="" kind={kind} compact />}
      {list.isError && (
        <Alert color="red" title="The files cannot be listed">
          {describe(list.error)}
        </Alert>
      )}
      {list.isPending && !list.isError && <PageLoader label="Loading the files" />}
      {list.data &&
        (list.data.items.length === 0 ? (
          <Text c="dimmed" ta="center" py="lg">
            {q ? `No ${kindName} match “${q}”.` : `The library has no ${kindName} yet.`}
          </Text>
        ) : view === "grid" ? (
          <MediaGrid files={list.data.items} onUse={use} />
        ) : (
          <MediaTable files={list.data.items} onUse={use} />
        ))}
      {pages > 1 && (
        <Group justify="flex-end">
          <PageNav total={pages} value={Math.min(page, pages)} onChange={setPage} size="sm" />
        </Group>
      )}
    </Stack>
  );
}
