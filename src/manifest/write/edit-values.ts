import { Composer, CST, type Document, Scalar } from "yaml";
import type { FieldPath } from "../locate.js";
import { readYamlDocument, readYamlTokens, yamlReadable } from "../parse/yaml-text.js";
import { nodeAt, scalarAt } from "../yaml-path.js";

// Edits scalar values inside a manifest file through the yaml package's CST: only the edited
// scalars change; comments, key order, quoting, indentation and every other byte stay as they were
// (drift --write). Pure.

export type ValueEdit = {
  kind: string;
  name: string;
  path: FieldPath;
  value: string | number | boolean | null;
};
export type EditOutcome = { edit: ValueEdit; line: number; written: boolean; reason?: string };

/** How a value is written into an existing scalar: strings that would read back as something else are quoted. */
function sourceOf(value: ValueEdit["value"]): { text: string; quote: boolean } {
  if (typeof value !== "string") return { text: value === null ? "null" : String(value), quote: false };
  // Read back as a node, not as a JS value: a string like "[WIP]: agent" is a mapping with a list
  // for its key, which converting to JS would stringify (the yaml package warns on stderr). A
  // value yaml cannot read at all (a live "\r": its lexer loops, yaml-text.ts) is quoted unread.
  if (!yamlReadable(value)) return { text: value, quote: true };
  const doc = readYamlDocument(value, "value");
  const readBack = doc.errors.length === 0 && doc.value instanceof Scalar ? doc.value.value : undefined;
  return { text: value, quote: readBack !== value };
}

/** Sets each edit's scalar in `text`; `file` names it in an error (a text yaml cannot read). */
export function editValues(
  text: string,
  edits: readonly ValueEdit[],
  file = "manifest",
): { text: string; outcomes: EditOutcome[] } {
  const lineStarts: number[] = [];
  const tokens = readYamlTokens(text, file, (offset) => lineStarts.push(offset));
  const lineOf = (offset: number) => {
    let line = 0; // the parser reports offset 0 as the first line start
    for (const start of lineStarts) if (start <= offset) line++;
    return line;
  };
  // Each document by kind and name, read once (a file may hold many documents and many edits).
  const docs = new Map<string, Document>();
  for (const doc of new Composer({ keepSourceTokens: true }).compose(tokens)) {
    const kind = scalarAt(doc, ["kind"]);
    const name = scalarAt(doc, ["metadata", "name"]);
    const key = `${String(kind)}/${String(name)}`;
    if (!docs.has(key)) docs.set(key, doc);
  }
  const outcomes: EditOutcome[] = [];
  for (const edit of edits) {
    const doc = docs.get(`${edit.kind}/${edit.name}`);
    const node = doc ? nodeAt(doc, edit.path) : undefined;
    if (!doc || !(node instanceof Scalar) || !node.srcToken) {
      outcomes.push({ edit, line: 0, written: false, reason: "not a single value in the manifest" });
      continue;
    }
    const { text: source, quote } = sourceOf(edit.value);
    const token = node.srcToken;
    const plain = token.type === "scalar";
    // Always one line (`implicitKey`: no block scalar, no folding; a line break is written `\n`):
    // folded, a double-quoted value's next lines were indented as its key and the file no longer
    // parsed. One line also keeps every other line where it was.
    CST.setScalarValue(token, source, {
      implicitKey: true,
      ...(quote && plain ? { type: "QUOTE_DOUBLE" as const } : {}),
    });
    outcomes.push({ edit, line: lineOf(node.range?.[0] ?? 0), written: true });
  }
  return { text: tokens.map((t) => CST.stringify(t)).join(""), outcomes };
}
