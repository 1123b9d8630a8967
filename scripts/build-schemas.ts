import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { SCHEMA_FILES } from "../src/manifest/json-schema.js";

/**
 * `npm run schemas`: writes schemas/*.schema.json from the TypeBox shapes in src/schema/.
 * test/schemas/ fails when the committed files differ from what this would write.
 */
const renderSchema = (schema: unknown): string => `${JSON.stringify(schema, null, 2)}\n`;

async function writeSchemas(dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  for (const [name, schema] of Object.entries(SCHEMA_FILES)) {
    const path = join(dir, name);
    await writeFile(path, renderSchema(schema));
    written.push(path);
  }
  return written;
}

const out = resolve(process.argv[2] ?? "schemas");
for (const path of await writeSchemas(out)) console.log(`wrote ${path}`);
