// Create a module type from an existing module's fields (administrators):
// from the structure editor (the module is given) or from the module
// types screen (pick an app, then one of its modules).
import { toast } from "../modules/components/Guarded";
import { Alert, Modal, Select, Stack, Text, TextInput } from "@mantine/core";
import { useState, type FormEvent } from "react";
import { describe } from "../../lib/errors";
import { useApps } from "../access/hooks";
import { useModules, type Module } from "../modules/api";
import { fieldsForType, useCreateModuleType } from "./api";
import { FormFooter } from "../shell/FormFooter";

export function CreateTypeModal({
  opened,
  onClose,
  module,
  defaultApp,
}: {
  opened: boolean;
  onClose: () => void;
  /** The module to copy; without it the user picks one. */
  module?: Module;
  defaultApp?: string;
}) {
  const apps = useApps();
  const [app, setApp] = useState<string | null>(defaultApp ?? null);
  const [picked, setPicked] = useState<string | null>(null);
  const [name, setName] = useState("");
  const modules = useModules(module ? undefined : (app ?? undefined));
  const source = module ?? modules.data?.find((m) => m.id === picked);
  const create = useCreateModuleType();
  const typeName = name || source?.name || "";
  const relations = (source?.fields ?? []).filter((f) => f.rules.module).map((f) => f.name);

  function close() {
    setPicked(null);
    setName("");
    create.reset();
    onClose();
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    if (!source || !typeName.trim()) return;
    create.mutate(
      { name: typeName.trim(), isSingle: source.isSingle, fields: fieldsForType(source.fields ?? []) },
      {
        onSuccess: (t) => {
          toast("green", "Module type created", `“${t.name}” has ${t.fields.length} field(s).`);
          close();
        },
      },
    );
  }

  return (
    <Modal opened={opened} onClose={close} title="New module type from a module">
      <form onSubmit={submit} noValidate>
        <Stack>
          {!module && (
            <>
              <Select
                // A searchable Select shows its value's label only if the data is there when it mounts.
                key={apps.data ? "ready" : "loading"}
                label="App"
                placeholder="Choose an app"
                data={(apps.data ?? []).map((a) => ({ value: a.id, label: a.name }))}
                value={app}
                onChange={(v) => {
                  setApp(v);
                  setPicked(null);
                }}
                searchable
                allowDeselect={false}
              />
              <Select
                key={modules.data ? `ready-${app}` : "loading"}
                label="Module"
                description="Its fields and single flag are copied into the module type."
                placeholder={!app ? "Choose an app first" : modules.isLoading ? "Loading modules…" : "Choose a module"}
                data={(modules.data ?? []).map((m) => ({ value: m.id, label: `${m.name} (${m.fields?.length ?? 0} fields)` }))}
                value={picked}
                onChange={setPicked}
                disabled={!app}
                searchable
                nothingFoundMessage="No module of that name"
              />
            </>
          )}
          {module && (
            <Text size="sm">
              The {module.fields?.length ?? 0} saved field(s) of “{module.name}” and its single flag are copied into the module type.
            </Text>
          )}
          <TextInput
            label="Name of the module type"
            required
            placeholder={source?.name}
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            description={!name && source ? `“${source.name}” when left empty` : undefined}
            maxLength={200}
          />
          {relations.length > 0 && (
            <Text size="sm" c="dimmed">
              The target modules of {relations.join(", ")} are left out: they belong to one app, and a module type serves every app.
            </Text>
          )}
          {create.error && (
            <Alert color="red" title="The module type was not created">
              {describe(create.error)}
            </Alert>
          )}
          <FormFooter onCancel={close} submit="Create module type" loading={create.isPending} disabled={!source || !typeName.trim()} />
        </Stack>
      </form>
    </Modal>
  );
}
