import type { StatefulModule } from "./context.js";
import type { DeploymentStore, StoreChange, StoreSnapshot } from "./deployments/store.js";
import { HttpError } from "./http/http-errors.js";
import { JournalWriteError } from "./storage/journal-writer.js";
import { loadState, openJournal, type Journal, type WrapJournalFile } from "./storage/persistence.js";

type Snapshot = { version: 1; store: StoreSnapshot; modules: Record<string, unknown> };
type ModuleChange = { k: "mod"; name: string; v: unknown };

export type StateKeeper = {
  /**
   * Durably records every pending change (the store's and each module's) before a write is
   * answered. All or nothing: if they cannot be recorded, they are undone in memory and it throws.
   */
  commit(): Promise<void>;
  close(): Promise<void>;
};

/** A journal failure answers 503: the write was undone, not acknowledged; unless fatal, a retry may succeed. */
const unavailable = (error: unknown) =>
  error instanceof JournalWriteError
    ? new HttpError(503, error.message, error.fatal ? {} : { "retry-after": "1" })
    : error;

/** How to put back what one commit changed: the text each changed item had before it. */
type UndoStep =
  | { kind: "store"; key: string; change: StoreChange; before: string | undefined }
  | { kind: "module"; module: StatefulModule; before: string };
type Commit = { steps: UndoStep[]; undone: boolean };

const storeKey = (change: StoreChange) =>
  change.k === "dep" ? `dep\u0000${change.v.id}` : `session\u0000${change.tenant}\u0000${change.v.name}`;

const unchanged = (module: StatefulModule, text: string) => {
  try {
    return JSON.stringify(module.snapshot()) === text;
  } catch {
    return false;
  }
};

/** Restores the store and the modules from `dataDir` (if any) and keeps them durable from then on. */
export async function startStateKeeper(
  dataDir: string | undefined,
  store: DeploymentStore,
  modules: StatefulModule[],
  now: () => number,
  wrapJournalFile?: WrapJournalFile,
): Promise<StateKeeper> {
  if (dataDir === undefined) {
    return { commit: async () => void store.drain(), close: async () => undefined };
  }
  await restoreSaved(dataDir, store, modules);
  const k: Kept = { store, modules, storeText: new Map(), moduleText: new Map() };
  const journal: Journal = await openJournal(dataDir, compact(k, now()), wrapJournalFile);
  let inFlight: Commit[] = []; // commit order; a failed one and every later one are undone
  return {
    async commit() {
      const commit: Commit = { steps: [], undone: false };
      const records = record(k, commit);
      if (records.length === 0) return;
      inFlight.push(commit);
      try {
        await journal.append(records);
      } catch (error) {
        // Later commits were built on this one and fail with it: undo the newest first.
        const at = inFlight.indexOf(commit);
        const failed = at < 0 ? [commit] : inFlight.splice(at);
        for (const c of failed.reverse()) undo(k, c);
        throw unavailable(error);
      } finally {
        inFlight = inFlight.filter((c) => c !== commit);
      }
    },
    close: () => journal.close(),
  };
}

/** The snapshot, then the journal's entries after it, into the store and the modules. */
async function restoreSaved(
  dataDir: string,
  store: DeploymentStore,
  modules: StatefulModule[],
): Promise<void> {
  const { snapshot, entries } = await loadState(dataDir);
  const moduleData: Record<string, unknown> = {};
  if (snapshot) {
    const saved = snapshot as Snapshot;
    store.restore(saved.store);
    Object.assign(moduleData, saved.modules);
  }
  for (const entry of entries as Array<StoreChange | ModuleChange>) {
    if (entry.k === "mod") moduleData[entry.name] = entry.v;
    else store.apply(entry);
  }
  for (const module of modules) if (module.name in moduleData) module.restore(moduleData[module.name]);
}

/** What is kept durable, and the text of every item as last handed to the journal: what an undo puts back. */
type Kept = {
  store: DeploymentStore;
  modules: StatefulModule[];
  storeText: Map<string, string>;
  moduleText: Map<string, string>;
};

/** The snapshot the journal starts from; remembers each item's text. */
function compact(k: Kept, at: number): Snapshot {
  const compacted: Snapshot = { version: 1, store: k.store.snapshot(at), modules: {} };
  const remember = (change: StoreChange) => k.storeText.set(storeKey(change), JSON.stringify(change));
  for (const v of compacted.store.deployments) remember({ k: "dep", v });
  for (const { tenant, v } of compacted.store.sessions) remember({ k: "session", tenant, v });
  for (const module of k.modules) {
    const data = module.snapshot();
    compacted.modules[module.name] = data;
    k.moduleText.set(module.name, JSON.stringify(data));
  }
  return compacted;
}

function undo(k: Kept, commit: Commit): void {
  if (commit.undone) return;
  commit.undone = true;
  for (const step of [...commit.steps].reverse()) {
    if (step.kind === "module") {
      k.moduleText.set(step.module.name, step.before);
      step.module.restore(JSON.parse(step.before));
    } else if (step.before === undefined) {
      k.storeText.delete(step.key);
      k.store.remove(step.change);
    } else {
      k.storeText.set(step.key, step.before);
      k.store.apply(JSON.parse(step.before) as StoreChange);
    }
  }
}

/** Serialises what changed since the last commit; throws (after undoing it) if it cannot. */
function record(k: Kept, commit: Commit): string[] {
  const records: string[] = [];
  try {
    const changes = k.store.drain();
    for (const change of changes) {
      const key = storeKey(change);
      commit.steps.push({ kind: "store", key, change, before: k.storeText.get(key) });
    }
    for (const change of changes) {
      const text = JSON.stringify(change);
      k.storeText.set(storeKey(change), text);
      records.push(text);
    }
    for (const module of k.modules) {
      const before = k.moduleText.get(module.name) ?? "null";
      commit.steps.push({ kind: "module", module, before });
      const text = JSON.stringify(module.snapshot());
      if (text === before) {
        commit.steps.pop();
        continue;
      }
      k.moduleText.set(module.name, text);
      records.push(`{"k":"mod","name":${JSON.stringify(module.name)},"v":${text}}`);
    }
  } catch (error) {
    undo(k, commit);
    // Modules after the failing one may hold part of this write too: put back any that moved.
    const stepped = new Set(commit.steps.map((step) => step.kind === "module" && step.module));
    for (const module of k.modules.filter((m) => !stepped.has(m))) {
      const before = k.moduleText.get(module.name) ?? "null";
      if (!unchanged(module, before)) module.restore(JSON.parse(before));
    }
    throw new HttpError(
      500,
      `The change could not be stored (${(error as Error).message}) and was undone; nothing changed.`,
    );
  }
  return records;
}
