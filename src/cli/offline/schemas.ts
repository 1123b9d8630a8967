import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { Command } from "commander";
import { SCHEMA_FILES } from "../../manifest/json-schema.js";

export type Output = { write(text: string): unknown };

/** Writes the JSON Schemas of plumb manifests into `dir` (created if missing); returns the paths. */
export async function writeSchemaFiles(dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  for (const [name, schema] of Object.entries(SCHEMA_FILES)) {
    const path = join(dir, name);
    await writeFile(path, `${JSON.stringify(schema, null, 2)}\n`);
    written.push(path);
  }
  return written;
}

/** `plumb schemas --out DIR`: the schemas editors check manifests with, for a repository of its own. */
export function schemasCommand(stdout: Output = process.stdout): Command {
  return new Command("schemas")
    .description(
      "Write the JSON Schemas of plumb manifests into DIR, for editors (yaml-language-server, VS Code): see README 'Editor support'",
    )
    .requiredOption("--out <dir>", "directory to write them to (created if missing)")
    .action(async (options: { out: string }) => {
      for (const path of await writeSchemaFiles(resolve(options.out))) stdout.write(`wrote ${path}\n`);
    });
}
