// DeleteFile: "Delete…" asks to confirm; while items or pushes use the
// file the API refuses (409) and names them, and the dialog lists them
// and offers "Delete anyway" (force).
import { Alert, Button, Group, List, Modal, Stack, Text } from "@mantine/core";
import { notifications } from "@mantine/notifications";
import { IconTrash } from "@tabler/icons-react";
import { useState } from "react";
import { ApiError, describe } from "../../../lib/errors";
import { Warning } from "../../modules/components/ModuleDialogs";
import { useDeleteMedia, type MediaFile, type MediaUse } from "../api";
import { UseLink } from "./UsedIn";

/** usesOf: the uses a 409 names in `extra.usedIn`. */
function usesOf(err: unknown): MediaUse[] | undefined {
  if (!(err instanceof ApiError) || err.status !== 409) return undefined;
  const u = err.extra.usedIn;
  return Array.isArray(u) ? (u as MediaUse[]) : [];
}

export function DeleteFile({ file, onDeleted }: { file: MediaFile; onDeleted: () => void }) {
  const [opened, setOpened] = useState(false);
  const del = useDeleteMedia(file.app);
  const uses = usesOf(del.error);

  const close = () => {
    setOpened(false);
    del.reset();
  };
  const run = (force: boolean) =>
    del.mutate(
      { id: file.id, force },
      {
        onSuccess: () => {
          notifications.show({ color: "green", title: "Deleted", message: `“${file.name}” is deleted.` });
          setOpened(false);
          onDeleted();
        },
      },
    );

  return (
    <>
      <Button color="red.9" variant="outline" leftSection={<IconTrash size={16} aria-hidden />} onClick={() => setOpened(true)}>
        Delete…
      </Button>
      <Modal opened={opened} onClose={close} title={`Delete “${file.name}”?`}>
        <Stack>
          {uses ? (
            <Warning title="This file is in use">
              <Text size="sm" mb={4}>
                {del.error?.message.replace(/\.$/, "")}. Deleting it anyway leaves these pointing at a file that is gone:
              </Text>
              <List size="sm" aria-label="Uses of the file">
                {uses.map((u) => (
                  <List.Item key={`${u.type}-${u.id}`}>
                    <UseLink app={file.app} use={u} onTint />
                  </List.Item>
                ))}
              </List>
            </Warning>
          ) : (
            <Text size="sm">The file is deleted for good; its address stops serving it.</Text>
          )}
          {del.isError && !uses && (
            <Alert color="red" title="Not deleted">
              {describe(del.error)}
            </Alert>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>
              Cancel
            </Button>
            {uses ? (
              <Button color="red.9" loading={del.isPending} onClick={() => run(true)}>
                Delete anyway
              </Button>
            ) : (
              <Button color="red.9" loading={del.isPending} onClick={() => run(false)}>
                Delete
              </Button>
            )}
          </Group>
        </Stack>
      </Modal>
    </>
  );
}
