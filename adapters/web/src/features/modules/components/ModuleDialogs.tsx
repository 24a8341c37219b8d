// The modules list's dialogs: create (empty or from a module type),
// rename (apps address modules by name) and delete (typed confirmation).
import { toast } from "./Guarded";
import { Alert, Modal, Select, Stack, Switch, Text, TextInput } from "@mantine/core";
import { IconAlertTriangle } from "@tabler/icons-react";
import { useState, type FormEvent } from "react";
import { ApiError, describe } from "../../../lib/errors";
import { useModuleTypes } from "../../moduletypes/api";
import { useCreateModule, useDeleteModule, useUpdateModule, bodyOf, fetchModule, type Module } from "../api";
import { FormFooter } from "../../shell/FormFooter";

/** Warning: an alert whose title keeps its contrast (dark orange on light). */
export function Warning({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <Alert
      color="orange"
      variant="light"
      title={title}
      icon={<IconAlertTriangle aria-hidden />}
      styles={{ title: { color: "var(--mantine-color-dark-7)" }, icon: { color: "var(--mantine-color-orange-9)" } }}
    >
      {children}
    </Alert>
  );
}

function nameError(err: unknown): string | undefined {
  return err instanceof ApiError && (err.field === "name" || err.status === 409) ? err.message : undefined;
}

export function CreateModuleModal({
  app,
  opened,
  onClose,
  onCreated,
  initialType,
}: {
  app: string;
  opened: boolean;
  onClose: () => void;
  onCreated: (m: Module) => void;
  initialType?: string;
}) {
  const [name, setName] = useState("");
  const [single, setSingle] = useState(false);
  const [type, setType] = useState<string | null>(initialType ?? null);
  const [touched, setTouched] = useState(false);
  const types = useModuleTypes(opened);
  const create = useCreateModule(app);
  const chosen = types.data?.find((t) => t.id === type);
  const empty = !name.trim();

  function close() {
    setName("");
    setSingle(false);
    setType(null);
    setTouched(false);
    create.reset();
    onClose();
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    setTouched(true);
    if (empty) return;
    create.mutate(
      { name: name.trim(), isSingle: chosen ? chosen.isSingle : single, moduleType: type ?? undefined },
      {
        onSuccess: (m) => {
          toast("green", "Module created", `“${m.name}” is ready${chosen ? ` with the fields of ${chosen.name}` : ""}.`);
          close();
          onCreated(m);
        },
      },
    );
  }

  return (
    <Modal opened={opened} onClose={close} title="New module">
      <form onSubmit={submit} noValidate>
        <Stack>
          <TextInput
            label="Name"
            description="Apps and the SDKs find the module by this name."
            required
            data-autofocus
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            error={(touched && empty && "A name is required.") || nameError(create.error)}
            maxLength={200}
          />
          <Select
            // A searchable Select shows its value's label only if the data is there when it mounts.
            key={types.data ? "ready" : "loading"}
            label="Start from a module type"
            description={chosen ? `${chosen.fields.length} field(s): ${chosen.fields.map((f) => f.name).join(", ")}` : "Or start with no fields and add them in the structure editor."}
            placeholder={types.isLoading ? "Loading module types…" : "No module type (empty)"}
            data={(types.data ?? []).map((t) => ({ value: t.id, label: t.name }))}
            value={type}
            onChange={setType}
            clearable
            searchable
            nothingFoundMessage="No module type of that name"
          />
          <Switch
            label="Single item"
            description={chosen ? "Taken from the module type." : "The module holds one item only (a page, the app's settings)."}
            checked={chosen ? chosen.isSingle : single}
            disabled={!!chosen}
            onChange={(e) => setSingle(e.currentTarget.checked)}
          />
          {create.error && !nameError(create.error) && (
            <Alert color="red" title="The module was not created">
              {describe(create.error)}
            </Alert>
          )}
          <FormFooter onCancel={close} submit="Create module" loading={create.isPending} />
        </Stack>
      </form>
    </Modal>
  );
}

export function RenameModuleModal({ app, module, onClose }: { app: string; module: Module | undefined; onClose: () => void }) {
  const [name, setName] = useState<string | undefined>();
  const update = useUpdateModule(app);
  const value = name ?? module?.name ?? "";

  function close() {
    setName(undefined);
    update.reset();
    onClose();
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!module || !value.trim() || value.trim() === module.name) return;
    // A PUT replaces the fields too: send them as they are now, not as
    // the list read them a while ago.
    let current: Module;
    try {
      current = await fetchModule(module.id);
    } catch (err) {
      toast("red", "The module was not renamed", describe(err));
      return;
    }
    update.mutate(
      { id: module.id, body: { ...bodyOf(current), name: value.trim() } },
      {
        onSuccess: (m) => {
          toast("green", "Module renamed", `“${module.name}” is now “${m.name}”.`);
          close();
        },
      },
    );
  }

  return (
    <Modal opened={!!module} onClose={close} title={`Rename “${module?.name ?? ""}”`}>
      <form onSubmit={submit} noValidate>
        <Stack>
          <Warning title="Apps find modules by name">
            The HALO SDKs address a module by its name. Apps that read “{module?.name}” stop finding it after a rename until they are
            updated.
          </Warning>
          <TextInput
            label="New name"
            required
            data-autofocus
            value={value}
            onChange={(e) => setName(e.currentTarget.value)}
            error={(!value.trim() && "A name is required.") || nameError(update.error)}
            maxLength={200}
          />
          {update.error && !nameError(update.error) && (
            <Alert color="red" title="The module was not renamed">
              {describe(update.error)}
            </Alert>
          )}
          <FormFooter onCancel={close} submit="Rename" loading={update.isPending} disabled={!value.trim() || value.trim() === module?.name} />
        </Stack>
      </form>
    </Modal>
  );
}


export function DeleteModuleModal({ app, module, onClose }: { app: string; module: Module | undefined; onClose: () => void }) {
  const [typed, setTyped] = useState("");
  const del = useDeleteModule(app);
  const matches = !!module && typed.trim() === module.name;

  function close() {
    setTyped("");
    del.reset();
    onClose();
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    if (!module || !matches) return;
    del.mutate(module.id, {
      onSuccess: () => {
        toast("green", "Module deleted", `“${module.name}” and its items were deleted.`);
        close();
      },
    });
  }

  return (
    <Modal opened={!!module} onClose={close} title={`Delete “${module?.name ?? ""}”?`}>
      <form onSubmit={submit} noValidate>
        <Stack>
          <Text size="sm">
            Its items are deleted with it: searches, reads and apps no longer find them, and their history stays readable. Apps that
            read this module stop finding it. The name becomes free for a new module.
          </Text>
          <TextInput
            label={`Type the module's name, “${module?.name ?? ""}”, to confirm`}
            data-autofocus
            value={typed}
            onChange={(e) => setTyped(e.currentTarget.value)}
            autoComplete="off"
          />
          {del.error && (
            <Alert color="red" title="The module was not deleted">
              {describe(del.error)}
            </Alert>
          )}
          <FormFooter onCancel={close} submit="Delete module and items" color="red.9" disabled={!matches} loading={del.isPending} />
        </Stack>
      </form>
    </Modal>
  );
}
