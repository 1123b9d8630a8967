import type { Command } from "commander";
import { helpAfter } from "./command-help.js";

/** A command's factory, its help ending with helpAfter. */
const withHelp =
  (name: string, load: () => Promise<Command>): (() => Promise<Command>) =>
  async () => {
    const command = await load();
    const after = helpAfter(name);
    return after === "" ? command : command.addHelpText("after", after);
  };

/**
 * Every `plumb` sub-command, one factory per file (wiring only; the logic lives in src/*), loaded
 * when used: `plumb validate` does not load the control plane's server or the controller's
 * watchers (importing every command cost ~0.6 s at each start). A command's action sets
 * `process.exitCode` for a non-zero result and throws PlumbError for failures.
 */
export const COMMANDS: Record<string, () => Promise<Command>> = {
  validate: withHelp("validate", async () => (await import("./offline/validate.js")).validateCommand()),
  "control-plane": withHelp("control-plane", async () =>
    (await import("./control-plane/control-plane.js")).controlPlaneCommand(),
  ),
  render: withHelp("render", async () => (await import("./offline/render.js")).renderCommand()),
  plan: withHelp("plan", async () => (await import("./sync/plan.js")).planCommand()),
  diff: withHelp("diff", async () => (await import("./sync/diff.js")).diffCommand()),
  apply: withHelp("apply", async () => (await import("./sync/apply.js")).applyCommand()),
  drift: withHelp("drift", async () => (await import("./sync/drift.js")).driftCommand()),
  promote: withHelp("promote", async () => (await import("./sync/promote.js")).promoteCommand()),
  adopt: withHelp("adopt", async () => (await import("./adopt/adopt.js")).adoptCommand()),
  import: withHelp("import", async () => (await import("./adopt/import.js")).importCommand()),
  status: withHelp("status", async () => (await import("./sync/status.js")).statusCommand()),
  unlock: withHelp("unlock", async () => (await import("./sync/unlock.js")).unlockCommand()),
  schemas: withHelp("schemas", async () => (await import("./offline/schemas.js")).schemasCommand()),
  controller: withHelp("controller", async () =>
    (await import("./controller/controller.js")).controllerCommand(),
  ),
  demo: withHelp("demo", async () => (await import("./demo/demo.js")).demoCommand()),
  // Given this table (not importing it): the completion script describes every command. Its help
  // has its own "Install:" examples.
  completion: async () => (await import("./offline/completion.js")).completionCommand(COMMANDS),
};
