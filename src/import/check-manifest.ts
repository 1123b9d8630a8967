import { escapeControls } from "../errors.js";
import { parseManifestText, tooLarge } from "../manifest/parse/parse.js";
import { validateDocuments } from "../manifest/validate.js";

// `plumb import` writes no manifest that validation refuses: the file's text is read back as plan
// would read it. A live value the manifest rules refuse (a control character in a label, a value
// out of the schema's range), or a file over the manifests' size limit, would otherwise make the
// whole repository fail validation. Pure.

/** The first error validation finds in an imported file's text (escaped, one line), or undefined. */
export function importedFileError(text: string, file: string, maxBytes: number): string | undefined {
  // Over the size limit, the loader refuses the file unread (manifest-too-large).
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > maxBytes) return `${tooLarge(file, bytes, maxBytes).message} [manifest-too-large]`;
  const parsed = parseManifestText(text, file);
  const { problems } = validateDocuments(parsed.documents, parsed.problems);
  // Checked alone, the file cannot see the repository's Environment documents; import --env names
  // only an environment the repository defines (environmentImport).
  const error = problems.find((p) => p.severity === "error" && p.code !== "unknown-environment");
  if (!error) return undefined;
  const field = error.field ? `${error.field}: ` : "";
  return escapeControls(`${field}${error.message} [${error.code}]`);
}
