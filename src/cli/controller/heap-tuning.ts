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
// - --optimize-for-size: every full GC also shrinks the heap. V8 otherwise keeps the pages a full
//   GC frees in a pool for reuse, resident and outside the heap's own figures: 30-43 MB at a restart
//   over 10,000 objects. Full GCs that shrink cost time (10,000 new objects ready 10-20% later).
// - With the restart, MALLOC_ARENA_MAX=1 (V8's and libuv's threads each kept a malloc arena of their
//   own: 23-35 MB resident between them at 10,000 objects) and MALLOC_MMAP_THRESHOLD_=16384: blocks
//   of 16 KiB and more are mapped on their own and given back when freed, instead of staying
//   resident in the one arena after a burst of V8's compilers (30-37 MB at their peak, most of it
//   the WebAssembly burst below).
// - --liftoff-only: fetch's HTTP parser (undici's llhttp) is WebAssembly, and V8 recompiled its hot
//   functions with its optimising compiler a few seconds into a restart: a 20-22 MB burst of compiler
//   memory, at the moment the heap is largest. Liftoff's code parses the API's small answers well
//   enough. Set only for the V8 versions node was checked to accept it on (Node 20 to 24's, 11 to
//   13; measured on 24's): node refuses a flag its V8 does not know, and V8 calls it a testing flag.
// Under a memory limit of 512 MiB or less (a small pod; memory-limit.ts), also:
// - the old generation capped at 5/16 of the limit (80 MiB in a 256 MiB pod), so V8 collects
//   harder near it instead of the pod being OOM-killed, and, above all, overshoots less: while a
//   full GC marks, V8 lets the heap grow past its allocation limit by up to min(32 MB, (cap -
//   limit) / 2) before it finishes the GC eagerly. At half the limit that was the whole 32 MB: a
//   restart over 10,000 objects (≈ 45-50 MB live) reached 80-85 MB of heap at its full GCs, 145-170
//   MB RSS. At 5/16 it is ≈ 12 MB: 138-145 MB. The trade: less room for a bigger tree (in a 256
//   MiB pod a first start over 20,000 objects ran, 152 MB; over 30,000 V8 failed fatally, its
//   heap at the cap, where half the limit ran them at 189 MB); a bigger tree needs a bigger
//   limit, which raises the cap with it. 2 MB semi-spaces.
// Flags fixed when the heap is made need a restart: the controller restarts itself with them, in
// place (process.execve: same PID, no second process) where Node has it (22.15+, 24); on older
// Node set them yourself (docs/troubleshooting.md). Settings the user gave node (flags or
// NODE_OPTIONS) win.

export const CONTROLLER_HEAP_GROWING_PERCENT = 10;
/** The newest V8 major version --liftoff-only was checked on (Node 24's). */
const LIFTOFF_ONLY_MAX_V8 = 13;
/** At or under this memory limit the controller sizes itself for a small pod. */
export const SMALL_MEMORY_LIMIT = 512 * 2 ** 20;
/** A small pod's old generation cap, as a share of its memory limit (see above). */
const SMALL_POD_OLD_SPACE_SHARE = 5 / 16;

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
  v8Version: string = process.versions.v8,
): ControllerRestart | undefined {
  const small = limit !== undefined && limit <= SMALL_MEMORY_LIMIT;
  const wanted: Array<[RegExp, string]> = [
    [
      /^--(max[-_]semi[-_]space[-_]size|max[-_]young[-_]generation[-_]size)\b/,
      `--max-semi-space-size=${small ? 2 : 4}`,
    ],
  ];
  if (small)
    wanted.push([
      /^--max[-_]old[-_]space[-_]size\b/,
      `--max-old-space-size=${Math.floor((limit * SMALL_POD_OLD_SPACE_SHARE) / 2 ** 20)}`,
    ]);
  wanted.push([/^--(no-)?optimize[-_]for[-_]size\b/, "--optimize-for-size"]);
  if (Number(v8Version.split(".")[0]) <= LIFTOFF_ONLY_MAX_V8)
    wanted.push([/^--(no-)?(liftoff[-_]only|liftoff|wasm[-_]tier[-_]up)\b/, "--liftoff-only"]);
  const flags = wanted.filter(([pattern]) => !given(execArgv, env.NODE_OPTIONS, pattern)).map(([, f]) => f);
  if (flags.length === 0) return undefined;
  const malloc: Array<[string, string]> = [
    ["MALLOC_ARENA_MAX", "1"],
    ["MALLOC_MMAP_THRESHOLD_", "16384"],
  ];
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
