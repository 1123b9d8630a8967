import { Document, Scalar, visit, YAMLMap } from "yaml";
import type { JsonObject } from "../diff/values.js";

// A built manifest as YAML in the style of examples/: a schema comment for editors, a line saying
// where it came from, block style with `valueFrom: { env: NAME }` inline. Pure.

export function formatManifest(manifest: JsonObject, header: readonly string[]): string {
  const doc = new Document(manifest);
  // valueFrom maps print inline, as in the examples.
  visit(doc, {
    Pair(_, pair) {
      if (pair.key instanceof Scalar && pair.key.value === "valueFrom" && pair.value instanceof YAMLMap)
        pair.value.flow = true;
    },
  });
  doc.commentBefore = header.map((line) => ` ${line}`).join("\n");
  return doc.toString({ lineWidth: 0 });
}
