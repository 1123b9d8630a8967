import { parentPort, workerData } from "node:worker_threads";
import { loadManifests } from "../../manifest/load.js";

// Worker-thread entry (manifest-thread.ts): loads and validates a manifest root off the
// controller's event loop and posts plain data back (values, files and problems; no closures).

type Request = { id: number; root: string };
const { maxBytes } = workerData as { maxBytes: number };

parentPort?.on("message", ({ id, root }: Request) => {
  loadManifests(root, { maxBytes }).then(
    ({ manifests, environments, problems }) =>
      parentPort?.postMessage({
        id,
        // The start position goes along (cheap for a one-document file): every plan line needs it.
        manifests: manifests.map(({ manifest, file, location }) => ({ manifest, file, location })),
        environments: environments?.map(({ manifest, file, location }) => ({ manifest, file, location })),
        problems,
      }),
    (error: unknown) =>
      parentPort?.postMessage({
        id,
        error: { message: (error as Error).message, code: (error as { code?: unknown }).code },
      }),
  );
});
