import { existsSync } from "node:fs";
import { cp, readdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { PlumbError } from "../../errors.js";
import { readYamlDocument } from "../../manifest/parse/yaml-text.js";
import { deleteAt } from "../../manifest/yaml-path.js";

// The demo's manifests: a temporary copy of the examples repository (its Environment documents and
// the agents' manifests; not the CI and Kubernetes examples), editable freely.

/** The parts of examples/ the demo copies: the environments and the agents of both installations. */
const PARTS = ["environments", "saas", "self-hosted"] as const;

/** The examples shipped with plumb, from src/cli/demo or dist/src/cli/demo (the repository or the image). */
function findExamples(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, "examples");
    if (PARTS.every((part) => existsSync(join(candidate, part)))) return candidate;
    dir = dirname(dir);
  }
  throw new PlumbError(
    "demo-examples-missing",
    "examples/ (environments, saas, self-hosted) not found next to plumb; run from the repository",
  );
}

/** Copies the examples into `dir`, their schema comments pointing at plumb's own schemas. */
export async function copyExamples(dir: string): Promise<void> {
  const examples = findExamples();
  for (const part of PARTS) await cp(join(examples, part), join(dir, part), { recursive: true });
  await pointSchemaComments(dir, join(dirname(examples), "schemas"));
  await dropCustomUrls(join(dir, "self-hosted"));
}

/**
 * A self-hosted deployment's custom_url is its address in our cluster, which the demo cannot
 * reach: the copy leaves it out, so verify asks the local control plane's agent server instead
 * (docs/apply.md "Agent-server URL").
 */
async function dropCustomUrls(dir: string): Promise<void> {
  for (const name of await readdir(dir)) {
    if (!name.endsWith(".yaml")) continue;
    const doc = readYamlDocument(await readFile(join(dir, name), "utf8"), join(dir, name));
    if (!deleteAt(doc, ["spec", "source_config", "custom_url"])) continue;
    await writeFile(join(dir, name), doc.toString({ lineWidth: 0 }));
  }
}

/**
 * The examples' `# yaml-language-server: $schema=../../schemas/...` comments are relative to the
 * repository: in the temporary copy they point at plumb's schemas by absolute path instead, so an
 * editor opened on the copy still validates and completes.
 */
async function pointSchemaComments(dir: string, schemas: string): Promise<void> {
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".yaml")) continue;
    const file = join(entry.parentPath, entry.name);
    const text = await readFile(file, "utf8");
    const pointed = text.replace(
      /^(# yaml-language-server: \$schema=)(?:\.\.\/)+schemas\/(\S+)$/m,
      (_all, prefix: string, schema: string) => `${prefix}${join(schemas, schema)}`,
    );
    if (pointed !== text) await writeFile(file, pointed);
  }
}
