import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { layerOf, layers } from "../../layers.js";

// The real import graph of src/, checked against layers.js (eslint enforces the same table file by
// file; this also catches cycles inside a folder, which eslint's zones cannot see).

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "../../src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** Relative imports of one file (static, re-exports and dynamic), as src-relative .ts paths. */
export function importsOf(file: string, text: string): string[] {
  const found: string[] = [];
  const pattern = /(?:from\s+|import\s*\(\s*|import\s+)"(\.{1,2}\/[^"]+)"/g;
  for (const match of text.matchAll(pattern)) {
    const target = resolve(dirname(file), match[1]!).replace(/\.js$/, ".ts");
    found.push(relative(SRC, target));
  }
  return found;
}

const files = sourceFiles(SRC);
const graph = new Map(
  files.map((file) => [relative(SRC, file), importsOf(file, readFileSync(file, "utf8"))]),
);

/** Strongly connected components with more than one member (Tarjan). */
function cycles(edges: Map<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of edges.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) found.push(component.sort());
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return found;
}

describe("the layers of src/", () => {
  it("places every folder and top-level file of src/ in layers.js", () => {
    const unplaced = [...new Set([...graph.keys()].map(layerOf))].filter((layer) => !(layer in layers));
    expect(unplaced).toEqual([]);
  });

  it("imports only in the allowed directions", () => {
    const refused: string[] = [];
    for (const [from, targets] of graph) {
      for (const to of targets) {
        const [a, b] = [layerOf(from), layerOf(to)];
        if (a !== b && !layers[a]?.includes(b)) refused.push(`${from} → ${to}`);
      }
    }
    expect(refused).toEqual([]);
  });

  it("has no cycle between folders", () => {
    const folderEdges = new Map<string, string[]>();
    for (const [from, targets] of graph) {
      const edges = folderEdges.get(layerOf(from)) ?? [];
      for (const to of targets) if (layerOf(to) !== layerOf(from)) edges.push(layerOf(to));
      folderEdges.set(layerOf(from), edges);
    }
    expect(cycles(folderEdges)).toEqual([]);
  });

  it("keeps src/environment pure, between manifest and diff", () => {
    // It resolves what plan compares: no I/O module, no client, no status, nothing above it.
    expect(layers.environment).toEqual(["schema", "manifest", "errors"]);
    expect(layers.manifest).not.toContain("environment");
    const mine = files.filter((file) => layerOf(relative(SRC, file)) === "environment");
    expect(mine.length).toBeGreaterThan(0);
    const io = mine.filter((file) => /from "node:/.test(readFileSync(file, "utf8")));
    expect(io).toEqual([]);
  });

  it("has no cycle between files", () => {
    expect(cycles(graph)).toEqual([]);
  });

  it("resolves every relative import to a file of src/", () => {
    const missing = [...graph].flatMap(([from, targets]) =>
      targets.filter((to) => !graph.has(to)).map((to) => `${from} → ${to}`),
    );
    expect(missing).toEqual([]);
  });

  it("finds static, re-exported and dynamic imports", () => {
    const file = join(SRC, "apply/example.ts");
    const text = [
      'import { a } from "./a.js";',
      'export { b } from "../diff/b.js";',
      'const c = await import("../status/c.js");',
      'import "../logger.js";',
    ].join("\n");
    expect(importsOf(file, text)).toEqual(["apply/a.ts", "diff/b.ts", "status/c.ts", "logger.ts"]);
  });
});
