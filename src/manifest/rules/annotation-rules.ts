import type { ParsedDocument } from "../parse/parse.js";
import type { Problem } from "../types.js";

// Annotations under "plumb/" are instructions to plumb: a typo must not silently turn a safety
// switch off, so unknown keys and values are errors. Other annotations are free-form.

/** The plumb/ annotations, their allowed values and the kinds they apply to. */
const PLUMB_ANNOTATIONS: Record<string, { values: readonly string[]; kinds: readonly string[] }> = {
  "plumb/prune": { values: ["disabled"], kinds: ["Deployment"] },
  "plumb/replace": { values: ["allowed"], kinds: ["Deployment"] },
};

export function checkAnnotations(doc: ParsedDocument): Problem[] {
  const metadata = doc.value.metadata;
  const annotations =
    typeof metadata === "object" && metadata !== null
      ? (metadata as { annotations?: unknown }).annotations
      : undefined;
  if (typeof annotations !== "object" || annotations === null) return [];
  const problems: Problem[] = [];
  for (const [key, value] of Object.entries(annotations as Record<string, unknown>)) {
    if (!key.startsWith("plumb/")) continue;
    const field = `metadata.annotations.${key}`;
    const known = PLUMB_ANNOTATIONS[key];
    const problem = (at: "key" | "value", message: string) =>
      problems.push({
        ...doc.locators[at](["metadata", "annotations", key]),
        severity: "error",
        code: "unknown-annotation",
        field,
        message,
      });
    if (!known) {
      problem(
        "key",
        `unknown plumb annotation "${key}"; known: ${Object.keys(PLUMB_ANNOTATIONS).join(", ")}`,
      );
    } else if (!known.kinds.includes(String(doc.value.kind))) {
      problem("key", `"${key}" applies to ${known.kinds.join(", ")} only`);
    } else if (typeof value !== "string" || !known.values.includes(value)) {
      problem(
        "value",
        `"${key}" must be ${known.values.map((v) => `"${v}"`).join(" or ")}, not ${JSON.stringify(value)}`,
      );
    }
  }
  return problems;
}
