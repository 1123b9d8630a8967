import { type Document, type Node, Scalar as ScalarNode, stringify, YAMLMap } from "yaml";
import { editValues } from "../manifest/write/edit-values.js";
import { readYamlDocuments, yamlReadable } from "../manifest/parse/yaml-text.js";
import { nodeAt, scalarAt } from "../manifest/yaml-path.js";

// Sets scalar values in a manifest file, adding the mapping keys that are missing on the way
// (drift --write into an environment's override, drift-write-environment.ts; a promotion writes `environments: {prod: {spec: {source_revision_config: {repo_ref: …}}}}`
// into a Deployment that may have no override yet). An existing value is replaced through the CST
// (edit-values.ts, as drift --write); a missing key is inserted as new text after the last entry of
// the deepest mapping that exists, in that mapping's style (block: its own indentation; flow:
// `, key: value` before its `}`). Every other byte stays as it was: comments, order, quoting.
// Each edit is checked by reading the result back: the document must equal the old one with
// exactly that value set, or the edit is not made. Pure.

type Scalar = string | number | boolean;
export type SetEdit = { kind: string; name: string; path: readonly string[]; value: Scalar };
export type SetOutcome = { edit: SetEdit; written: boolean; reason?: string };

type Docs = readonly Document[];

function findDocument(docs: Docs, kind: string, name: string): Document | undefined {
  return docs.find((d) => scalarAt(d, ["kind"]) === kind && scalarAt(d, ["metadata", "name"]) === name);
}

const scalarText = (value: Scalar): string => stringify(value, { lineWidth: 0 }).trimEnd();

/** `{a: {b: value}}` for the keys still missing under a flow mapping. */
const flowOf = (keys: readonly string[], value: Scalar): string =>
  keys.length === 1 ? `${keys[0]}: ${scalarText(value)}` : `${keys[0]}: {${flowOf(keys.slice(1), value)}}`;

/** The block lines of the keys still missing, the first at `indent`, each level `step` deeper. */
const blockOf = (keys: readonly string[], value: Scalar, indent: number, step: number, eol: string): string =>
  keys
    .map((key, i) => {
      const pad = " ".repeat(indent + i * step);
      return i === keys.length - 1 ? `${pad}${key}: ${scalarText(value)}` : `${pad}${key}:`;
    })
    .join(eol);

function columnOf(text: string, offset: number): number {
  return offset - (text.lastIndexOf("\n", offset - 1) + 1);
}

/** The indentation step of a document: how far its first nested block mapping is indented. */
function stepOf(text: string, root: YAMLMap): number {
  for (const pair of root.pairs()) {
    const value = pair.value;
    if (value instanceof YAMLMap && !value.flow) {
      const key = firstKey(value);
      if (key?.range) return Math.max(1, columnOf(text, key.range[0]));
    }
  }
  return 2;
}

/** The key node of a mapping's first entry, if it has one. */
function firstKey(map: YAMLMap): Node | undefined {
  for (const pair of map.pairs()) return pair.key;
  return undefined;
}

/** Inserts `keys: value` into `map` (which exists and lacks keys[0]); null when it cannot. */
function insertInto(text: string, map: YAMLMap, root: YAMLMap, keys: readonly string[], value: Scalar) {
  const range = map.range;
  if (!range) return null;
  if (map.flow) {
    let close = range[1] - 1;
    while (close > range[0] && text[close] !== "}") close--;
    if (text[close] !== "}") return null;
    let at = close;
    while (at > range[0] && /\s/.test(text[at - 1]!)) at--;
    const entry = flowOf(keys, value);
    const insert = map.size > 0 ? `, ${entry}` : text[at - 1] === "{" ? ` ${entry} ` : entry;
    return text.slice(0, at) + insert + text.slice(at);
  }
  const first = firstKey(map);
  if (!first?.range) return null;
  const indent = columnOf(text, first.range[0]);
  // The end of the mapping's last value, then the end of that line (past a trailing comment).
  let end = range[1];
  while (end > 0 && /\s/.test(text[end - 1]!)) end--;
  // The file's own line ending (CRLF files stay CRLF); the new lines go before the one that ends it.
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  let newline = text.indexOf("\n", end);
  if (newline > 0 && text[newline - 1] === "\r") newline--;
  const lines = blockOf(keys, value, indent, stepOf(text, root), eol);
  if (newline < 0) return `${text}${eol}${lines}${eol}`;
  return `${text.slice(0, newline)}${eol}${lines}${text.slice(newline)}`;
}

/** Applies one edit to `text` (the file `file`); the new text, or why it was not made. */
function setOne(text: string, edit: SetEdit, file: string): { text: string } | { reason: string } {
  const docs = readYamlDocuments(text, file);
  const doc = findDocument(docs, edit.kind, edit.name);
  const root = doc?.value;
  if (!doc || !(root instanceof YAMLMap)) return { reason: `no ${edit.kind} ${edit.name} in the file` };
  const existing = nodeAt(doc, edit.path);
  let next: string | null;
  if (existing instanceof ScalarNode) {
    const { text: edited, outcomes } = editValues(text, [{ ...edit, path: edit.path }], file);
    next = outcomes[0]?.written ? edited : null;
  } else if (existing !== undefined) {
    return { reason: `${edit.path.join(".")} is not a single value; edit it by hand` };
  } else {
    let depth = edit.path.length - 1;
    while (depth > 0 && nodeAt(doc, edit.path.slice(0, depth)) === undefined) depth--;
    const parent = depth === 0 ? root : nodeAt(doc, edit.path.slice(0, depth));
    if (!(parent instanceof YAMLMap))
      return { reason: `${edit.path.slice(0, depth).join(".")} is not a mapping` };
    next = insertInto(text, parent, root, edit.path.slice(depth), edit.value);
  }
  if (next === null || !readsBackAs(text, next, edit, file))
    return { reason: `${edit.path.join(".")} could not be written in place; edit it by hand` };
  return { text: next };
}

/** True when `after` is `before` with exactly the edit's value set (every document compared). */
function readsBackAs(before: string, after: string, edit: SetEdit, file: string): boolean {
  if (!yamlReadable(after)) return false;
  const old = readYamlDocuments(before, file);
  const now = readYamlDocuments(after, file);
  if (old.length !== now.length) return false;
  if (now.some((d) => d.errors.length > 0)) return false;
  const target = findDocument(old, edit.kind, edit.name);
  return old.every((doc, i) => {
    const expected: unknown = doc.toJS();
    if (doc === target) setPath(expected, edit.path, edit.value);
    return JSON.stringify(expected) === JSON.stringify(now[i]!.toJS());
  });
}

/** Sets `path` in a plain value, adding the mappings missing on the way. */
function setPath(value: unknown, path: readonly string[], leaf: Scalar): void {
  let current = value as Record<string, unknown>;
  path.forEach((key, i) => {
    if (i === path.length - 1) current[key] = leaf;
    else {
      const next = current[key];
      current = (typeof next === "object" && next !== null ? next : (current[key] = {})) as Record<
        string,
        unknown
      >;
    }
  });
}

/** Applies the edits in order (each on the text the previous one left); `file` names it in an error. */
export function setValues(
  text: string,
  edits: readonly SetEdit[],
  file = "manifest",
): { text: string; outcomes: SetOutcome[] } {
  let current = text;
  const outcomes: SetOutcome[] = [];
  for (const edit of edits) {
    const result = setOne(current, edit, file);
    if ("reason" in result) outcomes.push({ edit, written: false, reason: result.reason });
    else {
      current = result.text;
      outcomes.push({ edit, written: true });
    }
  }
  return { text: current, outcomes };
}
