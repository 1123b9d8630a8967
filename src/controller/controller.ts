import { systemClock } from "../clock.js";
import type { Controller, ControllerStartOptions } from "./controller-types.js";
import { listenEarly } from "./http/startup-http.js";
import { checkManifestRoot, openManifestSource } from "./source/manifest-source.js";
import { checkStoreInsideDir } from "./source/store-inside-dir.js";
import { checkDriftBranchOptions } from "./sweeps/drift-branch.js";
import { checkPromoteBranchOptions } from "./sweeps/promotion-branch.js";
import { startStore } from "./store.js";
import { definedEnvironments } from "./environments/environment-set.js";
import { startEnvironmentController } from "./environments/environment-controller.js";

export type {
  Controller,
  ControllerOptions,
  ControllerSource,
  ControllerStartOptions,
} from "./controller-types.js";

// `plumb controller`: wires the parts together. Manifests come from a source (directory or git) into
// a snapshot scanner; changes and drift sweeps queue work; the worker reconciles one object with the
// apply engine and records status; triggers and HTTP say when to look again (store.ts). A tree that
// defines environments gets one such store per environment (environments/, docs/environments.md).
// Startup checks what can fail (manifest root, listen port) before any reconcile or watcher starts,
// and a failure stops whatever was started, so the process exits with the error instead of running on.

export async function startController(options: ControllerStartOptions): Promise<Controller> {
  const log = options.logger;
  checkDriftBranchOptions(options);
  checkPromoteBranchOptions(options);
  const http = await listenEarly(options.listen, options.statusToken); // probes answer during the clone
  // Said at once with the bound address: `--listen HOST:0` takes a free port, and this says which.
  if (http) log.info({ url: http.url }, "listening: the probes and /metrics answer from now on");
  const source = await openManifestSource(options.source, options.env, log, options.signal).catch(
    async (error: unknown) => {
      await http?.close();
      throw error;
    },
  );
  try {
    await checkManifestRoot(options.source, source.manifestRoot);
    if (options.source.kind === "dir") await checkStoreInsideDir(source.manifestRoot, options.statusDir);
    const environments = await definedEnvironments(source.manifestRoot, options);
    if (environments)
      return await startEnvironmentController(options, {
        source,
        http,
        environments,
        clock: options.clock ?? systemClock,
      });
    const { environments: _none, environmentApi: _unused, replicaId: _single, ...single } = options;
    return await startStore({ ...single, api: apiOf(options) }, { source, http });
  } catch (error) {
    await source.close().catch(() => undefined);
    await http?.close().catch(() => undefined);
    throw error;
  }
}

/** The API settings without environments: given, or read now (the CLI defers a missing PLUMB_API_URL). */
const apiOf = (options: ControllerStartOptions) =>
  typeof options.api === "function" ? options.api() : options.api;
