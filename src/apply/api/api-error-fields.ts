import { ApiError } from "../../api/errors.js";
import { formatField } from "../../manifest/schema-check.js";
import type { LoadedManifest } from "../../manifest/types.js";

// A 422 names fields of the request body (`loc`); a user edits the manifest. These map each
// rejected field back to the manifest field and its file:line:col. Pure.

type Path = (string | number)[];

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The manifest secrets list (value or valueFrom per entry); empty when there is none. */
function manifestSecrets(loaded: LoadedManifest): Array<Record<string, unknown>> {
  const spec: unknown = (loaded.manifest as { spec?: unknown }).spec;
  const secrets = isRecord(spec) ? spec.secrets : undefined;
  return Array.isArray(secrets) ? secrets.filter(isRecord) : [];
}

/**
 * The manifest path of a request-body field: `name` → metadata.name, the uploaded tarball →
 * spec.source_path, a secret by its name (the body may list them in another order), the rest under spec.
 */
export function manifestPathOf(
  apiPath: readonly (string | number)[],
  loaded: LoadedManifest,
  body?: unknown,
): Path {
  const [head, ...rest] = apiPath;
  if (head === undefined) return [];
  if (head === "name" && rest.length === 0 && loaded.manifest.kind === "Deployment")
    return ["metadata", "name"];
  if (head === "source_revision_config" && rest[0] === "source_tarball_path") return ["spec", "source_path"];
  if (head === "secrets" && typeof rest[0] === "number") {
    const sent: unknown = isRecord(body) && Array.isArray(body.secrets) ? body.secrets[rest[0]] : undefined;
    const name = isRecord(sent) ? sent.name : undefined;
    const secrets = manifestSecrets(loaded);
    const index = secrets.findIndex((secret) => secret.name === name);
    if (index < 0) return ["spec", "secrets"];
    const [key, ...deeper] = rest.slice(1);
    // The API's value comes from valueFrom when the manifest does not hold it literally.
    const field =
      key === "value" && secrets[index]?.value === undefined && secrets[index]?.valueFrom ? "valueFrom" : key;
    return ["spec", "secrets", index, ...(field === undefined ? [] : [field, ...deeper])];
  }
  return ["spec", ...apiPath];
}

/**
 * The closing issue the client adds to a 422 list it cut (`src/api/transport/error-detail.ts`):
 * `… N more issues left out, …`. A note on the list, not a rejected field: read as one, it was
 * placed at line 1 of the manifest as "the document: … N more issues left out".
 */
const TRUNCATED_ISSUE = "plumb.truncated";

/**
 * Why a request failed, as results and status `last_error` say it. A 422 lists each rejected field
 * as `file:line:col: manifest.field: message`, then the client's note of issues it left out, in
 * parentheses; any other error keeps its own message.
 */
export function describeSendError(
  error: unknown,
  context: { loaded?: LoadedManifest | undefined; body?: unknown },
): string {
  const text = error instanceof Error ? error.message : String(error);
  const { loaded } = context;
  if (!(error instanceof ApiError) || !loaded) return text;
  const fields = error.fieldErrors();
  const rejected = fields.filter((f) => f.type !== TRUNCATED_ISSUE);
  if (rejected.length === 0) return text;
  const parts = rejected.map((f) => {
    const path = manifestPathOf(f.path, loaded, context.body);
    const at = loaded.locate(path);
    return `${at.file}:${at.line}:${at.column}: ${formatField(path) || "the document"}: ${f.message}`;
  });
  const notes = fields.filter((f) => f.type === TRUNCATED_ISSUE).map((f) => ` (${f.message})`);
  return `${error.method} ${error.path} rejected by the control plane (${error.status}): ${parts.join("; ")}${notes.join("")}`;
}
