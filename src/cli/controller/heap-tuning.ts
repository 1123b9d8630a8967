import { setFlagsFromString } from "node:v8";

// Heap settings the controller sets for itself (docs/controller.md "Speed and memory"). It keeps a
// steady live set (a few KB per object) for days while making short-lived garbage, and V8 sizes
// the heap for throughput from the machine's memory: at 10,000 objects on a 24 GB host that was
// ~500 MB RSS for a ~50 MB live set.
//
// Always:
// - Growth: after a full GC V8 lets the heap grow up to 4x what survived before the next one;
//   10% keeps RSS near the live set for a few more incremental full GCs (tens of ms each). V8
//   reads this flag at every GC, so setting it as the command starts takes effect.
// - Young generation: 32 MB (Node 20) to 128 MB (Node 24) by default, resident all day; 4 MB
//   semi-spaces hold a reconcile's short-lived garbage.
// - MALLOC_ARENA_MAX=1 with the restart: V8's and libuv's threads each kept a malloc arena of their
//   own (V8's compiler zones peak near 30 MB), 23-35 MB resident between them at 10,000 objects.
// Under a memory limit of 512 MiB or less (a small pod; memory-limit.ts), also:
// - the old generation capped at half the limit, so V8 collects harder near it instead of the
//   pod being OOM-killed; 2 MB semi-spaces; --optimize-for-size (full GCs that shrink the heap:
//   10,000 new objects are ready 10-20% later);
// - MALLOC_MMAP_THRESHOLD_=16384: blocks of 16 KiB and more are mapped on their own and given back
//   when freed, instead of staying resident in the one arena between compiler bursts (≈ 8 MB).
// Flags fixed when the heap is made need a restart: the controller restarts itself with them, in
// place (process.execve: same PID, no second process) where Node has it (22.15+, 24); on older
// Node set them in NODE_OPTIONS yourself. Settings the user gave node (flags or NODE_OPTIONS) win.

export const CONTROLLER_HEAP_GROWING_PERCENT = 10;
/** At or under this memory limit the controller sizes itself for a small pod. */
export const SMALL_MEMORY_LIMIT = 512 * 2 ** 20;

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

export type ControllerRestart = { flags: string[]; env: Record<string, string> };

/**
 * The node flags (and environment) to restart with for a memory limit in bytes (undefined: none),
 * or undefined when there is nothing to set: each flag the user gave node is left out, so the
 * restarted process, which has them all, does not restart again.
 */
export function controllerRestart(
  execArgv: readonly string[],
  env: NodeJS.ProcessEnv,
  limit: number | undefined,
): ControllerRestart | undefined {
  const small = limit !== undefined && limit <= SMALL_MEMORY_LIMIT;
  const wanted: Array<[RegExp, string]> = [
    [
      /^--(max[-_]semi[-_]space[-_]size|max[-_]young[-_]generation[-_]size)\b/,
      `--max-semi-space-size=${small ? 2 : 4}`,
    ],
  ];
  if (small)
    wanted.push(
      [/^--max[-_]old[-_]space[-_]size\b/, `--max-old-space-size=${Math.floor(limit / 2 ** 21)}`],
      [/^--(no-)?optimize[-_]for[-_]size\b/, "--optimize-for-size"],
    );
  const flags = wanted.filter(([pattern]) => !given(execArgv, env.NODE_OPTIONS, pattern)).map(([, f]) => f);
  if (flags.length === 0) return undefined;
  const malloc: Array<[string, string]> = [["MALLOC_ARENA_MAX", "1"]];
  if (small) malloc.push(["MALLOC_MMAP_THRESHOLD_", "16384"]);
  return { flags, env: Object.fromEntries(malloc.filter(([name]) => env[name] === undefined)) };
}

/**
 * Call first thing in `plumb controller` (before any thread or output): may replace the process
 * with itself plus heap flags, then sets the growth flag. Returns the small-pod settings this Node
 * could not apply (no process.execve: Node before 22.15), for a warning once logging is set up.
 */
export function tuneHeapForController(
  proc: NodeProcess,
  limit: number | undefined,
): ControllerRestart | undefined {
  const restart = controllerRestart(proc.execArgv, proc.env, limit);
  if (restart && typeof proc.execve === "function")
    proc.execve(proc.execPath, [proc.execPath, ...restart.flags, ...proc.execArgv, ...proc.argv.slice(1)], {
      ...proc.env,
      ...restart.env,
    });
  const flag = controllerHeapFlag(proc.execArgv, proc.env.NODE_OPTIONS);
  if (flag) setFlagsFromString(flag);
  const small = limit !== undefined && limit <= SMALL_MEMORY_LIMIT;
  return restart && small ? restart : undefined;
}
