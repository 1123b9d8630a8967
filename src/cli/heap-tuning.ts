import { setFlagsFromString } from "node:v8";

// Heap settings the controller sets for itself (docs/controller.md "Speed and memory"). It keeps a
// steady live set (a few KB per object) for days while making short-lived garbage, and V8 sizes
// the heap for throughput from the machine's memory: at 10,000 objects on a 24 GB host that was
// ~500 MB RSS for a ~60 MB live set. Neither setting is a cap: a larger live set still fits.
//
// - Growth: after a full GC V8 lets the heap grow up to 4x what survived before the next one;
//   10% keeps RSS near the live set for a few more incremental full GCs (tens of ms each). V8
//   reads this flag at every GC, so setting it as the command starts takes effect.
// - Young generation: 32 MB (Node 20) to 128 MB (Node 24) by default, resident all day; 4 MB
//   semi-spaces hold a reconcile's short-lived garbage. It is fixed when the heap is made, so the controller
//   restarts itself with it, in place (process.execve: same PID, no second process) where Node
//   has it (22.15+, 24); on older Node set NODE_OPTIONS=--max-semi-space-size=4 yourself.
// Settings the user gave node (flags or NODE_OPTIONS) win.

export const CONTROLLER_HEAP_GROWING_PERCENT = 10;
const CONTROLLER_SEMI_SPACE_MB = 4;

type NodeProcess = Pick<NodeJS.Process, "execArgv" | "env" | "argv" | "execPath"> & {
  execve?: (file: string, args?: readonly string[], env?: NodeJS.ProcessEnv) => never;
};

const given = (execArgv: readonly string[], nodeOptions: string | undefined, pattern: RegExp) =>
  [...execArgv, ...(nodeOptions ?? "").split(/\s+/)].some((flag) => pattern.test(flag));

/** The V8 growth flag to set now, or undefined when the user chose their own. */
export function controllerHeapFlag(
  execArgv: readonly string[],
  nodeOptions: string | undefined,
): string | undefined {
  if (given(execArgv, nodeOptions, /^--heap[-_]growing[-_]percent\b/)) return undefined;
  return `--heap-growing-percent=${CONTROLLER_HEAP_GROWING_PERCENT}`;
}

/** The node flags to restart with, or undefined when the young generation is already set. */
export function controllerRestartFlags(
  execArgv: readonly string[],
  nodeOptions: string | undefined,
): string[] | undefined {
  if (given(execArgv, nodeOptions, /^--(max[-_]semi[-_]space[-_]size|max[-_]young[-_]generation[-_]size)\b/))
    return undefined;
  return [`--max-semi-space-size=${CONTROLLER_SEMI_SPACE_MB}`];
}

/**
 * Call first thing in `plumb controller` (before any thread or output): may replace the process
 * with itself plus heap flags, then sets the growth flag.
 */
export function tuneHeapForController(proc: NodeProcess): void {
  const restart = controllerRestartFlags(proc.execArgv, proc.env.NODE_OPTIONS);
  if (restart && typeof proc.execve === "function")
    proc.execve(
      proc.execPath,
      [proc.execPath, ...restart, ...proc.execArgv, ...proc.argv.slice(1)],
      proc.env,
    );
  const flag = controllerHeapFlag(proc.execArgv, proc.env.NODE_OPTIONS);
  if (flag) setFlagsFromString(flag);
}
