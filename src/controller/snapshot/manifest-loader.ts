import type { LoadResult } from "../../manifest/load.js";
import { loadManifests, loadManifestsInSlices } from "../../manifest/load.js";
import type { Compact } from "../../manifest/validate.js";
import { compactLoaded } from "./compact-manifest.js";
import { startManifestThread } from "./manifest-thread.js";
import { refuseEnvironments } from "./refuse-environments.js";
import type { Timers } from "../queue/work-queue.js";

// How the controller reads its manifests. In its own event loop, in slices of SLICE_MS with a
// yield between them, so probes and reconciles keep running during a 10,000-file rescan; a worker
// thread kept for this cost 25 MB idle and 40-50 MB after each big load (a second V8 isolate, which
// does not give its memory back). A file over IN_LOOP_MAX_BYTES could hold the loop for up to a
// second while refused (1 MiB of keys): that tree is loaded on a worker (manifest-thread.ts),
// started for it and stopped once no such load came for WORKER_IDLE_MS.

const SLICE_MS = 10;
const IN_LOOP_MAX_BYTES = 32 * 1024;
const WORKER_IDLE_MS = 30_000;

export type ManifestLoader = {
  /** The tree, refused when it defines environments (refuse-environments.ts). */
  load(root: string): Promise<LoadResult>;
  /** The tree with its Environment documents (the environment controller resolves each one's view). */
  loadTree(root: string): Promise<LoadResult>;
  /** Whether a worker thread is running now (tests, and the idle stop). */
  threadRunning(): boolean;
  close(): Promise<void>;
};

export function createManifestLoader(
  maxBytes: number,
  timers: Timers,
  options: { idleMs?: number; inLoopMaxBytes?: number; sliceMs?: number } = {},
): ManifestLoader {
  let thread: ReturnType<typeof startManifestThread>;
  let cancelIdleStop: (() => void) | undefined;
  const stopThread = async () => {
    cancelIdleStop?.();
    cancelIdleStop = undefined;
    const stopping = thread;
    thread = undefined;
    await stopping?.close();
  };
  const offThread = async (root: string): Promise<LoadResult> => {
    cancelIdleStop?.();
    thread ??= startManifestThread(maxBytes);
    // Running from TypeScript sources (tests) there is no compiled worker: load in one piece.
    if (!thread) return loadManifests(root, { maxBytes });
    try {
      return await thread.load(root);
    } finally {
      cancelIdleStop = timers.setTimeout(() => void stopThread(), options.idleMs ?? WORKER_IDLE_MS);
    }
  };
  const loadTree = async (root: string, compact?: Compact) => {
    const result = await loadManifestsInSlices(root, {
      maxBytes,
      maxFileBytes: options.inLoopMaxBytes ?? IN_LOOP_MAX_BYTES,
      sliceMs: options.sliceMs ?? SLICE_MS,
      compact,
    });
    return "offThread" in result ? await offThread(root) : result;
  };
  return {
    // Each manifest compacted as soon as it passed, as the snapshot keeps it (compact-manifest.ts):
    // the tree's parsed documents are not all held until the last file is read.
    load: async (root) => refuseEnvironments(await loadTree(root, (loaded) => compactLoaded(loaded, root))),
    // Environments resolve each view from the loaded positions (environment/resolve.ts): not compacted.
    loadTree: (root) => loadTree(root),
    threadRunning: () => thread !== undefined,
    close: stopThread,
  };
}
