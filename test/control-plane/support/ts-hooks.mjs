// Module hooks: `./x.js` imports resolve to `./x.ts` when only the .ts exists; .ts files are
// transpiled (types stripped) with the project's TypeScript.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import ts from "typescript";

export async function resolve(specifier, context, next) {
  if (specifier.endsWith(".js") && (specifier.startsWith(".") || specifier.startsWith("file:")) && context.parentURL) {
    const url = new URL(specifier, context.parentURL);
    const tsUrl = new URL(url.href.replace(/\.js$/, ".ts"));
    if (!existsSync(fileURLToPath(url)) && existsSync(fileURLToPath(tsUrl))) return next(tsUrl.href, context);
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (!url.endsWith(".ts")) return next(url, context);
  const source = await readFile(fileURLToPath(url), "utf8");
  const { outputText } = ts.transpileModule(source, {
    fileName: fileURLToPath(url),
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2023, sourceMap: false },
  });
  return { format: "module", source: outputText, shortCircuit: true };
}
