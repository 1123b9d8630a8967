import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  type ParsedDocument,
  parseManifestText,
  parseWithPositions,
} from "../../src/manifest/parse/parse.js";

// A plan line names each document's line (its kind key), kept from the first parse; the positions of
// fields are parsed again on demand (parse.ts): both must say what the positional parser says.

const root = fileURLToPath(new URL("../../", import.meta.url));

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : yamlFiles(path);
    return /\.ya?ml$/.test(entry.name) ? [path] : [];
  });
}

// `slow` reads the start as the positional parser finds the kind key (a path walk), not as
// documentStart (locate.ts) computes it for every document: the two must agree.
const startOf = (text: string) => {
  const at = (d: ParsedDocument) => [d.locators.start, d.locators.value(["metadata", "name"])];
  const fast = parseManifestText(text, "m.yaml").documents.map(at);
  const slow = parseWithPositions(text, "m.yaml", true)
    .documents.filter((d) => d.value.apiVersion === "plumb/v1")
    .map((d) => [d.locators.key(["kind"]), d.locators.value(["metadata", "name"])]);
  return { fast, slow };
};

describe("a document's start line", () => {
  const files = [...yamlFiles(join(root, "test/fixtures")), ...yamlFiles(join(root, "examples"))];

  it.each(files.map((file) => [relative(root, file), file]))(
    "agrees with the positional parser: %s",
    (_name, file) => {
      const { fast, slow } = startOf(readFileSync(file, "utf8"));
      expect(fast).toEqual(slow);
    },
  );

  it.each([
    [
      "comments and blank lines first",
      "# a\n\n# b\napiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: a}\n",
    ],
    [
      "kind after metadata",
      "apiVersion: plumb/v1\nmetadata:\n  name: a\n  labels: {kind: x}\nkind: Deployment\n",
    ],
    ["a leading document marker", "---\napiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: a}\n"],
    [
      "kind in a block scalar",
      "apiVersion: plumb/v1\nmetadata:\n  name: a\n  notes: |\n    kind: x\nkind: Deployment\n",
    ],
    ["a flow mapping", "{apiVersion: plumb/v1, kind: Deployment, metadata: {name: a}}\n"],
    ["a quoted kind key", 'apiVersion: plumb/v1\n"kind": Deployment\nmetadata: {name: a}\n'],
    [
      "two documents",
      "apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: a}\n---\napiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: b}\n",
    ],
    ["CRLF line ends", "apiVersion: plumb/v1\r\n\r\nkind: Deployment\r\nmetadata: {name: a}\r\n"],
  ])("agrees with the positional parser: %s", (_name, text) => {
    const { fast, slow } = startOf(text);
    expect(fast.length).toBeGreaterThan(0);
    expect(fast).toEqual(slow);
  });
});
