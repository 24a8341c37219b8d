// The structure editor's state: the working copy of the module, what the
// server has, whether they differ, and the API's refusals mapped to the
// module's name, its tags, its single flag or one field.
import { useEffect, useMemo, useState } from "react";
import { ApiError, describe } from "../../../lib/errors";
import type { Module } from "../api";
import { affectedOf } from "./ConflictAlert";
import { bodyOfDraft, draftOf, type Draft, type DraftField } from "./draft";

export interface ServerErrors {
  name?: string;
  tags?: string;
  isSingle?: string;
  /** By field key. */
  fields: Record<string, string>;
  /** A refusal that names nothing on the screen. */
  general?: string;
  /** A 409 listing affected items. */
  conflict?: ApiError;
}

const stampOf = (m: Module) => `${m.id}:${m.updatedAt ?? m.createdAt}`;

export function useStructureDraft(module: Module | undefined) {
  const [draft, setDraft] = useState<Draft>();
  const [base, setBase] = useState<{ stamp: string; body: string }>();
  const [server, setServer] = useState<ServerErrors>({ fields: {} });
  /** The server's module changed while the draft had unsaved changes. */
  const [changedElsewhere, setChangedElsewhere] = useState(false);

  const body = useMemo(() => (draft ? JSON.stringify(bodyOfDraft(draft)) : ""), [draft]);
  const dirty = !!base && body !== base.body;

  function reset(m: Module) {
    const d = draftOf(m);
    setDraft(d);
    setBase({ stamp: stampOf(m), body: JSON.stringify(bodyOfDraft(d)) });
    setServer({ fields: {} });
    setChangedElsewhere(false);
  }

  // Take the server's version when nothing is being edited; otherwise say
  // that it changed and let the user choose.
  useEffect(() => {
    if (!module) return;
    if (!base || base.stamp.split(":")[0] !== module.id) reset(module);
    else if (stampOf(module) !== base.stamp) {
      if (dirty) setChangedElsewhere(true);
      else reset(module);
    }
  }, [module]);

  function update(change: (d: Draft) => Draft) {
    setDraft((d) => (d ? change(d) : d));
  }

  function setField(f: DraftField) {
    update((d) => ({ ...d, fields: d.fields.map((x) => (x.key === f.key ? f : x)) }));
    if (server.fields[f.key]) {
      const { [f.key]: _gone, ...rest } = server.fields;
      setServer((s) => ({ ...s, fields: rest }));
    }
  }

  /**
   * refused maps the API's error to where it belongs; it answers the key
   * of the field it names, if any.
   */
  function refused(err: unknown): string | undefined {
    if (!(err instanceof ApiError) || !draft) {
      setServer({ fields: {}, general: describe(err) });
      return undefined;
    }
    if (affectedOf(err)) {
      setServer({ fields: {}, conflict: err });
      return undefined;
    }
    const pos = err.extra.position;
    const byPos = typeof pos === "number" ? draft.fields[pos] : undefined;
    const byName = err.field ? draft.fields.find((f) => f.name === err.field) : undefined;
    if (!byPos && err.field === "name" && !byName) return void setServer({ fields: {}, name: err.message });
    if (!byPos && err.field === "tags") return void setServer({ fields: {}, tags: err.message });
    if (!byPos && err.field === "isSingle") return void setServer({ fields: {}, isSingle: err.message });
    const target = byPos ?? byName;
    if (target) {
      setServer({ fields: { [target.key]: err.message } });
      return target.key;
    }
    setServer({ fields: {}, general: err.message });
    return undefined;
  }

  return {
    draft,
    dirty,
    server,
    changedElsewhere,
    reset,
    update,
    setField,
    refused,
    clearServer: (p: Partial<ServerErrors>) => setServer((s) => ({ ...s, ...p })),
  };
}
