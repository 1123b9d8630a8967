import { resolveTree } from "../../environment/resolve-tree.js";
import type { LoadResult } from "../../manifest/load.js";

// One read of the tree serves every environment's scan of one trigger: each environment's scanner
// takes its own view of it (resolve-tree.ts). A scan shares a read only if that read started after
// the trigger (next()) and this environment has not used it yet; any other scan (a prune-delay
// rescan, a scan coalesced after a run) reads the tree afresh, so no scan sees files older than
// what asked for it. The read is let go once it is parsed (the scans that share it hold it).

export type EnvironmentLoad = {
  /** A trigger: scans from now on read the tree afresh (once, shared). */
  next(): void;
  /** The scanner's load for one environment: its deployments, resolved, and the tree's problems. */
  forEnvironment(name: string): (root: string) => Promise<LoadResult>;
};

export function createEnvironmentLoad(loadTree: (root: string) => Promise<LoadResult>): EnvironmentLoad {
  let generation = 0;
  let read: { generation: number; used: Set<string>; tree: Promise<LoadResult> | undefined } | undefined;
  const treeFor = (name: string, root: string): Promise<LoadResult> => {
    let current = read;
    if (!current?.tree || current.generation !== generation || current.used.has(name)) {
      const tree = loadTree(root);
      current = read = { generation, used: new Set(), tree };
      // Kept only for the scans its trigger starts together: a parsed tree is not held between scans.
      const settled = current;
      void tree.finally(() => void (settled.tree = undefined)).catch(() => undefined);
    }
    current.used.add(name);
    return current.tree!;
  };
  return {
    next: () => void generation++,
    forEnvironment: (name) => async (root) => {
      const tree = await treeFor(name, root);
      const resolved = resolveTree(tree, name);
      return { manifests: resolved.manifests, problems: resolved.problems };
    },
  };
}
