import { resolveTree } from "../../environment/resolve-tree.js";
import type { LoadResult } from "../../manifest/load.js";
import type { LoadedEnvironment } from "../../manifest/types.js";

// One read of the tree serves every environment's scan of one trigger: each environment's scanner
// takes its own view of it (resolve-tree.ts). A scan shares a read only if that read started after
// the trigger (next()) and this environment has not used it yet; any other scan (a prune-delay
// rescan, a scan coalesced after a run) reads the tree afresh, so no scan sees files older than
// what asked for it. The read is let go once it is parsed (the scans that share it hold it), or,
// when the trigger itself read it first (shared(): which environments the tree defines now), once
// the trigger's scans are done (release()). Each environment is resolved with the Environment
// document the controller follows (environmentOf: the last valid one when git's is invalid).

export type EnvironmentLoad = {
  /** A trigger: scans from now on read the tree afresh (once, shared). Its number, in order. */
  next(): number;
  /** This trigger's read, kept for its scans until release(). */
  shared(root: string): Promise<LoadResult>;
  release(): void;
  /**
   * Whether the read of trigger `generation` (next()'s number) may be followed: no later trigger's
   * read was. Triggers overlap (a file event during a manual rescan), and a read that started
   * earlier but finished later holds older files. Recorded: call once, when following.
   */
  follows(generation: number): boolean;
  /** The scanner's load for one environment: its deployments, resolved, and the tree's problems. */
  forEnvironment(name: string): (root: string) => Promise<LoadResult>;
};

type Read = { generation: number; used: Set<string>; tree: Promise<LoadResult> | undefined; kept: boolean };

export function createEnvironmentLoad(
  loadTree: (root: string) => Promise<LoadResult>,
  environmentOf: (name: string) => LoadedEnvironment | undefined = () => undefined,
): EnvironmentLoad {
  let generation = 0;
  let read: Read | undefined;
  let followed = 0;
  const fresh = (root: string): Read => {
    const tree = loadTree(root);
    const current: Read = (read = { generation, used: new Set(), tree, kept: false });
    // Kept only for the scans its trigger starts together: a parsed tree is not held between scans.
    void tree.finally(() => void (current.kept || (current.tree = undefined))).catch(() => undefined);
    return current;
  };
  const treeFor = (name: string, root: string): Promise<LoadResult> => {
    let current = read;
    if (!current?.tree || current.generation !== generation || current.used.has(name)) current = fresh(root);
    current.used.add(name);
    return current.tree!;
  };
  return {
    next: () => ++generation,
    shared(root) {
      const current = read?.tree && read.generation === generation ? read : fresh(root);
      current.kept = true;
      return current.tree!;
    },
    follows(of) {
      if (of <= followed) return false;
      followed = of;
      return true;
    },
    release() {
      if (read?.kept) read.tree = undefined;
    },
    forEnvironment: (name) => async (root) => {
      const tree = await treeFor(name, root);
      const followed = environmentOf(name);
      const resolved = resolveTree(followed ? { ...tree, environments: [followed] } : tree, name);
      return { manifests: resolved.manifests, problems: resolved.problems, elsewhere: resolved.elsewhere };
    },
  };
}
