// Module hooks: `./x.js` imports resolve to `./x.ts` when only the .ts exists; .ts files are
// transpiled (types stripped) with the project's TypeScript. Transpiled output is cached on disk
// by content hash (node_modules/.cache/plumb-ts-hooks), so a spawned process loads neither
// TypeScript nor re-transpiles a file it has seen: a restart in a test costs module loading only.
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const cacheDir = join(root, "node_modules", ".cache", "plumb-ts-hooks");
// The output depends on the compiler and on these options: both are part of the key.
const compilerVersion = JSON.parse(
  readFileSync(join(root, "node_modules", "typescript", "package.json"), "utf8"),
).version;
const OPTIONS_KEY = `ts-${compilerVersion}-esnext-es2023-v1`;

let compiler;
async function transpile(source, fileName) {
  compiler ??= (await import("typescript")).default;
  return compiler.transpileModule(source, {
    fileName,
    compilerOptions: {
      module: compiler.ModuleKind.ESNext,
      target: compiler.ScriptTarget.ES2023,
      sourceMap: false,
    },
  }).outputText;
}

export async function resolve(specifier, context, next) {
  if (
    specifier.endsWith(".js") &&
    (specifier.startsWith(".") || specifier.startsWith("file:")) &&
    context.parentURL
  ) {
    const url = new URL(specifier, context.parentURL);
    const tsUrl = new URL(url.href.replace(/\.js$/, ".ts"));
    if (!existsSync(fileURLToPath(url)) && existsSync(fileURLToPath(tsUrl))) return next(tsUrl.href, context);
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (!url.endsWith(".ts")) return next(url, context);
  const fileName = fileURLToPath(url);
  const source = await readFile(fileName, "utf8");
  const key = createHash("sha256").update(OPTIONS_KEY).update("\0").update(source).digest("hex");
  const cached = join(cacheDir, `${key}.js`);
  let output = await readFile(cached, "utf8").catch(() => undefined);
  if (output === undefined) {
    output = await transpile(source, fileName);
    // Write then rename: a concurrent process never reads a half-written entry.
    await mkdir(cacheDir, { recursive: true });
    const temporary = `${cached}.${process.pid}.tmp`;
    await writeFile(temporary, output);
    await rename(temporary, cached);
  }
  return { format: "module", source: output, shortCircuit: true };
}
