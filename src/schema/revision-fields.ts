// Which PATCH fields create a revision (spec 4.1 rule 1). Shared by the diff engine (plan) and the
// API client (a revision-creating PATCH is never resent after a lost response), so it lives with
// the API's shapes rather than in either of them.

/** Fields of source_revision_config whose change creates a revision. */
const REVISION_FIELDS_OF_SOURCE_REVISION_CONFIG: ReadonlySet<string> = new Set([
  "repo_ref",
  "graph_config_path",
  "image_uri",
  "source_tarball_path",
]);

type JsonObject = Record<string, unknown>;

// null and absent both mean "leave unchanged" in a PATCH body.
const isSet = (value: unknown): boolean => value !== null && value !== undefined;
const objectOrEmpty = (value: unknown): JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonObject) : {};

/** True when the server creates a revision for this PATCH body. */
export function createsRevision(body: JsonObject): boolean {
  const revision = objectOrEmpty(body.source_revision_config);
  return (
    [...REVISION_FIELDS_OF_SOURCE_REVISION_CONFIG].some((key) => isSet(revision[key])) ||
    isSet(body.secrets) ||
    isSet(objectOrEmpty(body.source_config).resource_spec)
  );
}
