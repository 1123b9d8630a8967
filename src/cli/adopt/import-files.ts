import { existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { escapeControls } from "../../errors.js";
import { type BuiltManifest, buildOrganizationManifest } from "../../import/build-manifest.js";
import { formatManifest } from "../../import/format-manifest.js";
import { importedFileError } from "../../import/check-manifest.js";
import type { Organization } from "../../schema/deployment.js";
import type { ApplyIo } from "../sync/apply.js";
import { shown } from "./import-live.js";

// `plumb import`: the files to write, each with its header and its text read back as plan reads it.

/** The editors' schema, relative to where the manifests go (as in examples/). */
function schemaComment(out: string): string[] {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const schema = join(dir, "schemas", "plumb.schema.json");
    if (existsSync(schema)) return [`yaml-language-server: $schema=${relative(resolve(out), schema)}`];
  }
  return [];
}

export type ImportFile = {
  file: string;
  /** What the file defines, as import-defined.ts names it: "Deployment NAME", "OrganizationAccess". */
  object: string;
  what: string;
  built: BuiltManifest;
  header: string[];
  liveName?: string;
};

/** The file of each deployment to write (as `name`), and of the organization's settings when read. */
export function importFiles(
  out: string,
  when: string,
  kept: ReadonlyArray<{ name: string; liveName: string; id: string; built: BuiltManifest }>,
  organization: Organization | undefined,
): ImportFile[] {
  const files: ImportFile[] = kept.map((k) => ({
    file: `${k.name}.yaml`,
    object: `Deployment ${k.name}`,
    what: `Deployment ${k.liveName} (${escapeControls(k.id)})`,
    built: k.built,
    header: [
      ...schemaComment(out),
      `Imported by plumb import from deployment ${escapeControls(k.id)} on ${when}.`,
    ],
    liveName: k.liveName,
  }));
  if (organization)
    files.push({
      file: "organization-access.yaml",
      object: "OrganizationAccess",
      what: `OrganizationAccess of ${shown(organization.display_name)}`,
      built: buildOrganizationManifest(organization),
      header: [
        ...schemaComment(out),
        `Imported by plumb import from organization ${escapeControls(organization.id)} on ${when}.`,
      ],
    });
  return files;
}

/**
 * Each file's text, read back as plan reads it: one that validation refuses (a live value such as
 * a control character in a label) is said on stdout and not written. Written, it made the whole
 * repository fail validation: plan, apply and the controller stopped on it.
 */
export function valid(
  files: readonly ImportFile[],
  maxBytes: number,
  stdout: ApplyIo["stdout"],
): Array<ImportFile & { text: string }> {
  const out: Array<ImportFile & { text: string }> = [];
  for (const f of files) {
    const text = formatManifest(f.built.manifest, f.header);
    const error = importedFileError(text, f.file, maxBytes);
    if (error === undefined) out.push({ ...f, text });
    else
      stdout.write(
        `skipped ${f.what}: its manifest would not validate (${error}); nothing is written for it\n`,
      );
  }
  return out;
}
