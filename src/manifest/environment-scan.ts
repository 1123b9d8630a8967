import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const SKIPPED = new Set(["node_modules", ".git", ".plumb"]);
const YAML_FILE = /\.ya?ml$/i;
const ENVIRONMENT_KIND = /^kind:\s*["']?Environment["']?\s*(#.*)?$/m;

/**
 * Whether any manifest under `path` may define `kind: Environment`: a text scan, far cheaper than
 * loading the tree, so a repository without environments is loaded once per command, as before.
 * A false "yes" only costs a full load; a missing or unreadable path answers no (the command
 * reports it as before).
 */
export function mayDefineEnvironments(path: string): boolean {
  const visit = (dir: string): boolean => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory() && !SKIPPED.has(entry.name) && visit(full)) return true;
      if (!entry.isDirectory() && YAML_FILE.test(entry.name) && ENVIRONMENT_KIND.test(read(full)))
        return true;
    }
    return false;
  };
  try {
    return statSync(path).isDirectory() ? visit(path) : ENVIRONMENT_KIND.test(read(path));
  } catch {
    return false;
  }
}

const read = (file: string): string => {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
};
