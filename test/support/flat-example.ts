import { cp, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseDocument } from "yaml";
import { deleteAt } from "../../src/manifest/yaml-path.js";

// examples/ is one repository with environments (docs/environments.md): its Deployments say where
// they run and what differs there. Tests and documentation runs that target one control plane,
// as a repository without Environment documents does, take a folder of it with those two parts
// removed: each Deployment's base spec, comments and layout kept (the base is valid on its own).

const EXAMPLES = join(import.meta.dirname, "..", "..", "examples");

/** Copies examples/NAME to `dest` as a repository without environments; returns `dest`. */
export async function copyFlatExample(name: "saas" | "self-hosted", dest: string): Promise<string> {
  await cp(join(EXAMPLES, name), dest, { recursive: true });
  for (const file of await readdir(dest)) {
    if (!file.endsWith(".yaml")) continue;
    const path = join(dest, file);
    const doc = parseDocument(await readFile(path, "utf8"));
    deleteAt(doc, ["metadata", "environments"]);
    deleteAt(doc, ["environments"]);
    await writeFile(path, doc.toString({ lineWidth: 0 }));
  }
  return dest;
}
