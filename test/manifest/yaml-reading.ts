import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { Composer, LineCounter, Parser } from "yaml";
import { documentStart } from "../../src/manifest/locate.js";
import { checkYamlShape } from "../../src/manifest/parse/yaml-shape.js";

// yaml's own reading of a text, to hold plumb's fast paths to (cst-compose.test.ts,
// line-compose.test.ts).

/** The repository's root, and every YAML file git holds under test/ and examples/ (the corpora's seeds). */
export const REPOSITORY = join(import.meta.dirname, "..", "..");
export const REPOSITORY_YAML_FILES = execFileSync(
  "git",
  ["ls-files", "test/*.yaml", "test/*.yml", "examples/*.yaml", "examples/*.yml"],
  { cwd: REPOSITORY, encoding: "utf8" },
)
  .split("\n")
  .filter(Boolean);

/** A value as text that tells apart what JSON does not: key order, -0, NaN, infinities, own "__proto__". */
export function canonical(value: unknown): string {
  if (typeof value === "number") return Object.is(value, -0) ? "-0" : String(value);
  if (typeof value !== "object" || value === null) return `${typeof value}:${JSON.stringify(value)}`;
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (Object.getPrototypeOf(value) !== Object.prototype) return "not a plain object";
  const keys = Reflect.ownKeys(value) as string[];
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(Object.getOwnPropertyDescriptor(value, k)!.value)}`).join(",")}}`;
}

export type Read = Array<{ value: string; line: number; column: number }>;

/** yaml's reading of `text`, or the first thing it reports (an error, a warning, a shape problem). */
export function viaYaml(text: string): Read | string {
  const lineCounter = new LineCounter();
  const docs = new Composer({ prettyErrors: false }).compose(new Parser(lineCounter.addNewLine).parse(text));
  const at = (offset: number) => ({ file: "f", ...lineCounter.linePos(offset), column: 0 });
  const read: Read = [];
  for (const doc of docs) {
    const said = [...doc.errors, ...doc.warnings][0]?.message ?? checkYamlShape(doc, at)[0]?.message;
    if (said !== undefined) return said;
    const { line, column } = documentStart(doc, lineCounter, "f");
    read.push({ value: canonical(doc.toJS({ maxAliasCount: 100 })), line, column });
  }
  return read;
}
