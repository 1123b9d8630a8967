import type { StatefulModule } from "./context.js";
import type { DeploymentStore, StoreChange, StoreSnapshot } from "./deployments/store.js";
import type { FastifyInstance } from "fastify";
import { HttpError } from "./http-errors.js";
import { JournalWriteError } from "./journal-writer.js";
import {
  loadState,
  openJournal,
  type Journal,
  type JournalEntry,
  type WrapJournalFile,
} from "./persistence.js";

type Snapshot = { version: 1; store: StoreSnapshot; modules: Record<string, unknown> };
type ModuleChange = { k: "mod"; name: string; v: unknown };

export type StateKeeper = {
  /** Durably records every pending change (the store's and each module's) before a write is answered. */
  commit(): Promise<void>;
  /** A failed commit is waiting to be written again: new writes are refused until it is. */
  failing(): boolean;
  close(): Promise<void>;
};

/** A journal failure answers 503: the write was not acknowledged; unless fatal, a retry may succeed. */
const unavailable = (error: unknown) =>
  error instanceof JournalWriteError
    ? new HttpError(503, error.message, error.fatal ? {} : { "retry-after": "1" })
    : error;

/** Restores the store and the modules from `dataDir` (if any) and keeps them durable from then on. */
export async function startStateKeeper(
  dataDir: string | undefined,
  store: DeploymentStore,
  modules: StatefulModule[],
  now: () => number,
  wrapJournalFile?: WrapJournalFile,
): Promise<StateKeeper> {
  if (dataDir === undefined) {
    return { commit: async () => void store.drain(), failing: () => false, close: async () => undefined };
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
  const journal: Journal = await openJournal(dataDir, compacted, wrapJournalFile);
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
      await journal.append(changes).catch((error: unknown) => {
        throw unavailable(error);
      });
    },
    failing: () => journal.failing(),
    close: () => journal.close(),
  };
}

/**
 * While a failed commit waits to be written again, a request that may write (any method but
 * GET, HEAD, OPTIONS) first retries it, and is refused with 503 if it still fails: changes that
 * are not on disk never pile up behind a full disk. Reads go on.
 */
export function installWriteGate(
  app: FastifyInstance,
  gate: { failing(): boolean; retry(): Promise<void> },
): void {
  app.addHook("onRequest", (request, _reply, done) => {
    const method = request.method;
    if (!gate.failing() || method === "GET" || method === "HEAD" || method === "OPTIONS") return done();
    gate.retry().then(
      () => done(),
      (error: unknown) => done(error as Error),
    );
  });
}
