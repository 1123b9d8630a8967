import { readApiOptions } from "../../api/config.js";
import { type Controller, startController } from "../../controller/controller.js";
import { createLogger } from "../../logger.js";
import { settingsOf } from "../environments.js";
import type { DemoIo } from "./demo-io.js";
import { demoLogStream } from "./demo-log.js";

// Step 8 of the demo: the controller watching the demo's copy of the examples, each environment
// against its own control plane.

export function startDemoController(
  dir: string,
  env: NodeJS.ProcessEnv,
  stdout: DemoIo["stdout"],
  color: boolean,
): Promise<Controller> {
  return startController({
    source: { kind: "dir", dir },
    // Unused: the tree defines environments, each with its own control plane.
    api: () => readApiOptions(env),
    // Each environment's api_url and api_key, read from the variables its Environment names.
    environmentApi: (environment, root) => {
      const settings = settingsOf(environment, root, env);
      return readApiOptions(settings.env, settings.flags);
    },
    listen: { host: "127.0.0.1", port: 0 },
    selfHeal: true,
    driftSchedule: "*/1 * * * *",
    concurrency: 8,
    debounceMs: 200,
    backoffBaseMs: 2_000,
    backoffMaxMs: 60_000,
    timeoutMs: 10 * 60_000,
    pollIntervalMs: 250,
    maxPollIntervalMs: 1_000,
    env,
    logger: createLogger({ level: "info" }, demoLogStream(stdout, color)),
  });
}
