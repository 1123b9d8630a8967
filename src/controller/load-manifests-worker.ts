import { parentPort, workerData } from "node:worker_threads";
import { loadManifests } from "../manifest/load.js";

// Worker-thread entry (manifest-thread.ts): loads and validates a manifest root off the
// controller's event loop and posts plain data back (values, files and problems; no closures).

type Request = { id: number; root: string };
const { maxBytes } = workerData as { maxBytes: number };

parentPort?.on("message", ({ id, root }: Request) => {
  loadManifests(root, { maxBytes }).then(
    ({ manifests, problems }) =>
      parentPort?.postMessage({
        id,
        manifests: manifests.map(({ manifest, file }) => ({ manifest, file })),
        problems,
      }),
    (error: unknown) =>
      parentPort?.postMessage({
        id,
        error: { message: (error as Error).message, code: (error as { code?: unknown }).code },
      }),
  );
});
