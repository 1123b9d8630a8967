import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { parseManifestText } from "../../src/manifest/parse/parse.js";
import type { Problem } from "../../src/manifest/types.js";
import { validateDocuments } from "../../src/manifest/validate.js";

/** The smallest valid Deployment (external_container, named a): a file that validates clean. */
export const VALID_DEPLOYMENT = `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: a
spec:
  source: external_container
  source_config: {listener_id: 10000000-0000-4000-8000-000000000001}
  source_revision_config: {image_uri: "img:1"}
`;

/** Parses and validates one file's text, as `plumb validate` would. */
export function check(text: string, file = "m.yaml") {
  const parsed = parseManifestText(text, file);
  return validateDocuments(parsed.documents, parsed.problems);
}

/** Problems as compact `LINE:COL severity code` strings, easy to compare exactly. */
export const brief = (problems: readonly Problem[]) =>
  problems.map((p) => `${p.line}:${p.column} ${p.severity} ${p.code}`);

/** Several files validated together (for rules across files). */
export function checkFiles(files: Record<string, string>) {
  const documents = [];
  const problems = [];
  for (const [file, text] of Object.entries(files)) {
    const parsed = parseManifestText(text, file);
    documents.push(...parsed.documents);
    problems.push(...parsed.problems);
  }
  return validateDocuments(documents, problems);
}

export const yaml = (strings: TemplateStringsArray, ...values: unknown[]) =>
  String.raw({ raw: strings }, ...values).replace(/^\n/, "");

/**
 * A temporary manifest root and a directory outside it (for symlink escapes), made before and
 * removed after each test; `put` writes a file under the root, creating its directories.
 */
export function useTempRoots(prefix: string) {
  const dirs = { root: "", outside: "" };
  beforeEach(async () => {
    dirs.root = await mkdtemp(join(tmpdir(), prefix));
    dirs.outside = await mkdtemp(join(tmpdir(), "plumb-outside-"));
  });
  afterEach(async () => {
    await rm(dirs.root, { recursive: true, force: true });
    await rm(dirs.outside, { recursive: true, force: true });
  });
  const put = async (path: string, text: string | Uint8Array) => {
    await mkdir(dirname(join(dirs.root, path)), { recursive: true });
    await writeFile(join(dirs.root, path), text);
  };
  return Object.assign(dirs, { put });
}
