import { DOCUMENT_KINDS } from "../../schema/constants.js";
import { checkEnvironmentDocument } from "../rules/environment/environment-rules.js";
import { type ParsedDocument, problemAt } from "../parse/parse.js";
import { checkDeploymentRules } from "../rules/rules.js";
import { checkSchema } from "../schema-check.js";
import { suggest } from "./suggest.js";
import { checkAnnotations } from "../rules/annotation-rules.js";
import { checkTextCharacters } from "../rules/text-rules.js";
import { checkProtoKeys } from "../rules/proto-key-rules.js";
import type { Problem, SourceLocation } from "../types.js";

// One document's own problems (validate.ts): its kind, its schema, the rules of its kind, and the
// names an earlier document defined already (a Deployment's, the one OrganizationAccess).

const KINDS = DOCUMENT_KINDS;
const isKind = (kind: unknown): kind is (typeof KINDS)[number] => KINDS.some((k) => k === kind);
const showLocation = (l: SourceLocation) => `${l.file}:${l.line}:${l.column}`;

/** What the documents read so far defined that a later one may repeat. */
export type Seen = {
  /** The first Deployment of each name (lowercased): its name and where its name's value is. */
  names: Map<string, { name: string; at: () => SourceLocation }>;
  organizationAccess?: SourceLocation;
};

/** One document's own problems (schema, rules) and the names it repeats; `first`: a name it defines. */
export function checkDocument(
  doc: ParsedDocument,
  seen: Seen,
): { found: Problem[]; more: number; first?: string } {
  const kind = doc.value.kind;
  if (!isKind(kind)) {
    const message =
      typeof kind === "string"
        ? `unknown kind "${kind}"; expected ${KINDS.join(" or ")}${suggest(kind, KINDS)}`
        : `a plumb document needs kind: ${KINDS.join(" or ")}`;
    return {
      found: [problemAt(doc.locators.value(["kind"]), "error", "unknown-kind", "kind", message)],
      more: 0,
    };
  }
  const schema = checkSchema(doc, kind);
  const schemaProblems =
    kind === "Environment" ? checkEnvironmentDocument(doc, schema.problems) : schema.problems;
  // A document read from plain text (line-compose.ts) holds no control character and no __proto__ key.
  const found = [
    ...schemaProblems,
    ...(doc.plainText ? [] : checkTextCharacters(doc)),
    ...checkAnnotations(doc),
    ...(doc.plainText ? [] : checkProtoKeys(doc)),
  ];
  if (kind === "Deployment") found.push(...checkDeploymentRules(doc));
  const name = nameOf(doc);
  let first: string | undefined;
  if (kind === "Deployment" && name !== undefined) {
    // Case-insensitively: status files are named after it, and would collide on macOS or Windows.
    const earlierOne = seen.names.get(name.toLowerCase());
    if (earlierOne) {
      const at = showLocation(earlierOne.at());
      const message =
        earlierOne.name === name
          ? `deployment ${name} is already defined at ${at}`
          : `deployment ${name} differs only by case from ${earlierOne.name} at ${at}; names must be unique ignoring case`;
      found.push(
        problemAt(
          doc.locators.value(["metadata", "name"]),
          "error",
          "duplicate-name",
          "metadata.name",
          message,
        ),
      );
    } else first = name;
  }
  if (kind === "OrganizationAccess") {
    if (seen.organizationAccess) {
      const message = `only one OrganizationAccess is allowed; another is at ${showLocation(seen.organizationAccess)}`;
      found.push(problemAt(doc.locators.start, "error", "duplicate-organization-access", "kind", message));
    } else seen.organizationAccess = doc.locators.start;
  }
  return { found, more: schema.more, first };
}

const nameOf = (doc: ParsedDocument): string | undefined => {
  const metadata = doc.value.metadata;
  const name =
    typeof metadata === "object" && metadata !== null ? (metadata as { name?: unknown }).name : undefined;
  return typeof name === "string" ? name : undefined;
};
