import type { Command } from "commander";

/**
 * Every `plumb` sub-command, one factory per file (wiring only; the logic lives in src/*), loaded
 * when used: `plumb validate` does not load the control plane's server or the controller's
 * watchers (importing every command cost ~0.6 s at each start). A command's action sets
 * `process.exitCode` for a non-zero result and throws PlumbError for failures.
 */
export const COMMANDS: Record<string, () => Promise<Command>> = {
  validate: async () => (await import("./offline/validate.js")).validateCommand(),
  "control-plane": async () => (await import("./control-plane/control-plane.js")).controlPlaneCommand(),
  render: async () => (await import("./offline/render.js")).renderCommand(),
  plan: async () => (await import("./sync/plan.js")).planCommand(),
  diff: async () => (await import("./sync/diff.js")).diffCommand(),
  apply: async () => (await import("./sync/apply.js")).applyCommand(),
  drift: async () => (await import("./sync/drift.js")).driftCommand(),
  promote: async () => (await import("./sync/promote.js")).promoteCommand(),
  adopt: async () => (await import("./adopt/adopt.js")).adoptCommand(),
  import: async () => (await import("./adopt/import.js")).importCommand(),
  status: async () => (await import("./sync/status.js")).statusCommand(),
  unlock: async () => (await import("./sync/unlock.js")).unlockCommand(),
  schemas: async () => (await import("./offline/schemas.js")).schemasCommand(),
  controller: async () => (await import("./controller/controller.js")).controllerCommand(),
  demo: async () => (await import("./demo/demo.js")).demoCommand(),
  // Given this table (not importing it): the completion script describes every command.
  completion: async () => (await import("./offline/completion.js")).completionCommand(COMMANDS),
};
