import type { StatefulModule } from "./context.js";
import type { DeploymentStore, StoreChange, StoreSnapshot } from "./deployments/store.js";
import { loadState, openJournal, type Journal, type JournalEntry } from "./persistence.js";

type Snapshot = { version: 1; store: StoreSnapshot; modules: Record<string, unknown> };
type ModuleChange = { k: "mod"; name: string; v: unknown };

export type StateKeeper = {
  /** Durably records every pending change (the store's and each module's) before a write is answered. */
  commit(): Promise<void>;
  close(): Promise<void>;
};

/** Restores the store and the modules from `dataDir` (if any) and keeps them durable from then on. */
export async function startStateKeeper(
  dataDir: string | undefined,
  store: DeploymentStore,
  modules: StatefulModule[],
  now: () => number,
): Promise<StateKeeper> {
  if (dataDir === undefined) {
    return { commit: async () => void store.drain(), close: async () => undefined };
  }
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
  const last = new Map<string, string>();
  const compacted: Snapshot = { version: 1, store: store.snapshot(now()), modules: {} };
  for (const module of modules) {
    const data = module.snapshot();
    compacted.modules[module.name] = data;
    last.set(module.name, JSON.stringify(data));
  }
  const journal: Journal = await openJournal(dataDir, compacted);
  return {
    async commit() {
      const changes: JournalEntry[] = store.drain();
      for (const module of modules) {
        const data = module.snapshot();
        const text = JSON.stringify(data);
        if (last.get(module.name) === text) continue;
        last.set(module.name, text);
        changes.push({ k: "mod", name: module.name, v: data });
      }
      await journal.append(changes);
    },
    close: () => journal.close(),
  };
}
