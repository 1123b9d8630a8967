import type { Command } from "commander";
import { adoptCommand } from "./adopt.js";
import { applyCommand } from "./apply.js";
import { controlPlaneCommand } from "./control-plane.js";
import { controllerCommand } from "./controller.js";
import { demoCommand } from "./demo.js";
import { driftCommand } from "./drift.js";
import { importCommand } from "./import.js";
import { planCommand } from "./plan.js";
import { statusCommand } from "./status.js";
import { unlockCommand } from "./unlock.js";
import { validateCommand } from "./validate.js";

/**
 * Every `plumb` sub-command, one factory per file (wiring only; the logic lives in src/*).
 * A command's action sets `process.exitCode` for a non-zero result and throws PlumbError for failures.
 */
export const COMMANDS: Array<() => Command> = [
  () => validateCommand(),
  () => controlPlaneCommand(),
  () => planCommand(),
  () => applyCommand(),
  () => driftCommand(),
  () => adoptCommand(),
  () => importCommand(),
  () => statusCommand(),
  () => unlockCommand(),
  () => controllerCommand(),
  () => demoCommand(),
];
