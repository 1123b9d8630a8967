import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";

// Reading the shipping files (CI workflows, Kubernetes manifests) for the shipping tests: the shell
// each CI job runs, the `plumb ...` command lines in it, and installs of plumb from the npm registry.

/** Every .yml/.yaml file under `dir`, sorted. */
export async function yamlFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await yamlFiles(path)));
    else if (/\.ya?ml$/.test(entry.name)) out.push(path);
  }
  return out.sort();
}

const SHELL_KEYS = new Set(["run", "script", "before_script", "after_script"]);

/** The shell a CI file runs: GitHub `run:` steps and GitLab `script:`/`before_script:`/`after_script:`. */
export function shellOf(yamlText: string): string[] {
  const out: string[] = [];
  const walk = (node: unknown, key?: string): void => {
    if (Array.isArray(node)) node.forEach((item) => walk(item, key));
    else if (node && typeof node === "object")
      for (const [k, v] of Object.entries(node as Record<string, unknown>)) walk(v, k);
    else if (typeof node === "string" && key && SHELL_KEYS.has(key)) out.push(node);
  };
  for (const doc of parseAllDocuments(yamlText)) walk(doc.toJS());
  return out;
}

/** The words of every `plumb ...` command line in a shell snippet (not the `<!-- plumb plan -->` comment marker). */
export const invocations = (script: string): string[][] =>
  [...script.matchAll(/(?:^|[\s;&|(])plumb ((?:[^\n|;&>]|\\\n)+)/g)]
    .map((m) => m[1]!.replace(/\\\n/g, " ").trim().split(/\s+/))
    .filter((words) => !words.includes("--"));

const PACKAGE_RUNNERS = new Set(["npm", "npx", "pnpm", "pnpx", "yarn", "bun", "bunx"]);
/** `plumb` or `plumb@1.2.3`: a bare registry name (a path, URL or `github:` spec is something else). */
const BARE_PLUMB = /^["']?plumb(@[^\s/:"']*)?["']?$/;

/**
 * Command lines that would fetch `plumb` from the npm registry by bare name (`npm install -g plumb`,
 * `npx plumb ...`, `yarn global add plumb@1`): that name belongs to an unrelated package.
 */
export function registryInstallsOfPlumb(text: string): string[] {
  const found: string[] = [];
  for (const line of text.split("\n")) {
    for (const segment of line.split(/&&|\|\||[;|]/)) {
      const words = segment.trim().split(/\s+/);
      const runner = words.findIndex((w) => PACKAGE_RUNNERS.has(w));
      if (runner >= 0 && words.slice(runner + 1).some((w) => BARE_PLUMB.test(w))) found.push(segment.trim());
    }
  }
  return found;
}
