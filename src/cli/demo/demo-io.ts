import type { Controller } from "../../controller/controller.js";
import type { DemoPlanes } from "./demo-planes.js";

// What `plumb demo` runs with: its output, environment and stop signal, and the hooks tests use.

export type DemoIo = {
  stdout: { write(text: string): unknown; isTTY?: boolean };
  stderr: { write(text: string): unknown };
  env: NodeJS.ProcessEnv;
  /** Resolves when the demo should stop (default: SIGINT or SIGTERM, resolved with its name). */
  stopSignal?: Promise<NodeJS.Signals | void>;
  /** Awaited once the examples are copied, before the first apply (tests break a manifest there). */
  onCopied?: (dir: string) => Promise<void> | void;
  /** Awaited once every environment is applied, before the controller (tests count on the planes). */
  onApplied?: (info: { dir: string; planes: DemoPlanes }) => Promise<void> | void;
  /** Awaited as the demo stops, before its control planes do (tests count on them). */
  onStopping?: (planes: DemoPlanes) => Promise<void> | void;
  /** Called once the controller is watching (tests edit files then). */
  onWatching?: (info: { dir: string; controller: Controller }) => void;
};
