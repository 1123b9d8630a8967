import { resolve } from "node:path";
import { writeSchemaFiles } from "../src/cli/offline/schemas.js";

/**
 * `npm run schemas`: writes schemas/*.schema.json from the TypeBox shapes in src/schema/.
 * test/schemas/ fails when the committed files differ from what this would write.
 */
const out = resolve(process.argv[2] ?? "schemas");
for (const path of await writeSchemaFiles(out)) console.log(`wrote ${path}`);
