import { writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { validatorsModule } from "./validators-module.js";

/**
 * `npm run validators`: writes src/schema/validators.generated.ts, every shape's validator compiled
 * by ajv (scripts/validators-module.ts). test/schemas/validators.test.ts fails when the committed
 * file differs from what this would write.
 */
const out = resolve(process.argv[2] ?? "src/schema/validators.generated.ts");
await writeFile(out, validatorsModule());
console.log(`wrote ${out}`);
