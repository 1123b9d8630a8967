import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { isErrorCode, PlumbError } from "../../errors.js";
import type { LoadResult } from "../../manifest/load.js";
import type { Problem } from "../../manifest/types.js";
import type { LoadedEnvironment, LoadedManifest } from "../../manifest/types.js";
import { locatorsOnDisk } from "./compact-manifest.js";

// The controller parses manifests on a worker thread: a hostile file (1 MiB of keys, deep nesting)
// takes about a second to refuse, and /healthz and the reconciles must not wait for it. Only
// plain data crosses the thread boundary; a manifest's positions are read again from its file
// when a message needs one (compact-manifest.ts does the same for every manifest it keeps).

type Reply =
  | {
      id: number;
      manifests: Array<Pick<LoadedManifest, "manifest" | "file" | "location">>;
      environments?: Array<Pick<LoadedEnvironment, "manifest" | "file" | "location">>;
      problems: Problem[];
    }
  | { id: number; error: { message: string; code?: unknown } };

export type ManifestThread = { load(root: string): Promise<LoadResult>; close(): Promise<void> };

const WORKER = new URL("./load-manifests-worker.js", import.meta.url);
const YOUNG_GENERATION_MB = 8;

/** A loader on a worker thread; undefined when running from TypeScript sources (tests), which load in-thread. */
export function startManifestThread(maxBytes: number): ManifestThread | undefined {
  if (!existsSync(fileURLToPath(WORKER))) return undefined;
  let worker: Worker | undefined;
  let nextId = 0;
  const waiting = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();
  const failAll = (error: Error) => {
    for (const { reject } of waiting.values()) reject(error);
    waiting.clear();
    worker = undefined; // the next load starts a fresh thread
  };
  const ensure = () => {
    if (worker) return worker;
    // A small young generation: parsing makes short-lived garbage, and V8's default (32 MB and
    // up, per isolate) stayed resident in this mostly idle thread after the first load.
    const started = new Worker(WORKER, {
      workerData: { maxBytes },
      resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
    });
    started.unref(); // an idle loader never keeps the process alive
    started.on("message", (reply: Reply) => {
      waiting.get(reply.id)?.resolve(reply);
      waiting.delete(reply.id);
    });
    started.on("error", failAll);
    started.on("exit", (code) => {
      if (worker === started) failAll(new Error(`the manifest loader thread exited (${code})`));
    });
    return (worker = started);
  };
  return {
    async load(root) {
      const thread = ensure();
      const id = nextId++;
      const reply = await new Promise<Reply>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        thread.postMessage({ id, root });
      });
      if ("error" in reply) {
        const { message, code } = reply.error;
        throw isErrorCode(code) ? new PlumbError(code, message) : new Error(message);
      }
      const environments = reply.environments?.map(
        (e) =>
          fromThread(
            e as unknown as Pick<LoadedManifest, "manifest" | "file" | "location">,
            root,
          ) as unknown as LoadedEnvironment,
      );
      return {
        manifests: reply.manifests.map((m) => fromThread(m, root)),
        ...(environments ? { environments } : {}),
        problems: reply.problems,
      };
    },
    async close() {
      const stopping = worker;
      worker = undefined;
      await stopping?.terminate();
    },
  };
}

const fileStart = (file: string) => ({ file, line: 1, column: 1 });

function fromThread(
  loaded: Pick<LoadedManifest, "manifest" | "file" | "location">,
  root: string,
): LoadedManifest {
  const { manifest, file, location } = loaded;
  return {
    manifest,
    file,
    location,
    locate: (path) => locatorsOnDisk(root, loaded)?.key(path) ?? fileStart(file),
  };
}
