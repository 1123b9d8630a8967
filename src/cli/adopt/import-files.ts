import { existsSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { type BuiltManifest, buildOrganizationManifest } from "../../import/build-manifest.js";
import { importFileName } from "../../import/file-name.js";
import { formatManifest } from "../../import/format-manifest.js";
import { importedFileError } from "../../import/check-manifest.js";
import { credentialIn } from "../../import/credentials.js";
import { SCHEMA_FILES } from "../../manifest/json-schema.js";
import type { Organization } from "../../schema/deployment.js";
import type { ApplyIo } from "../sync/apply.js";
import { shown } from "./import-live.js";

// `plumb import`: the files to write, each with its header and its text read back as plan reads it.

/** The published id of the schema of any plumb document (README "Editor support"). */
const PUBLISHED_SCHEMA = String(SCHEMA_FILES["plumb.schema.json"]!.$id);

/**
 * The editors' schema: the repository's own copy (schemas/plumb.schema.json in --out or a directory
 * above it, up to the root of its git repository; `plumb schemas --out schemas` writes it), relative
 * to the written file, as in examples/; else the published id. It was the path of the schema where
 * plumb is installed, relative to --out (`../../../usr/lib/node_modules/...`): a path of one machine,
 * committed to git, that no clone or colleague resolves.
 */
function schemaComment(out: string): string {
  const own = resolve(out);
  const dirs: string[] = [];
  for (let dir = own; ; dir = dirname(dir)) {
    dirs.push(dir);
    if (existsSync(join(dir, ".git")) || dir === dirname(dir)) break;
  }
  // Outside a git repository only --out itself counts: a directory above is nobody's repository.
  const repository = existsSync(join(dirs[dirs.length - 1]!, ".git")) ? dirs : [own];
  const copy = repository.map((dir) => join(dir, "schemas", "plumb.schema.json")).find((f) => existsSync(f));
  const target = copy === undefined ? PUBLISHED_SCHEMA : relative(own, copy).split(sep).join("/");
  return `yaml-language-server: $schema=${target}`;
}

/** A manifest written to another file than NAME.yaml says why (file-name.ts). */
function withFileNote(name: string, built: BuiltManifest): BuiltManifest {
  const { file, renamed } = importFileName(name);
  if (!renamed) return built;
  const note = `written as ${file}: ${name}.yaml names a device on Windows (${name.toUpperCase()}), which no clone there could check out`;
  return { ...built, notes: [...built.notes, note] };
}

export type ImportFile = {
  file: string;
  /** What the file defines, as import-defined.ts names it: "Deployment NAME", "OrganizationAccess". */
  object: string;
  what: string;
  /** The live deployment's id, or the organization's. */
  id: string;
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
    file: importFileName(k.name).file,
    object: `Deployment ${k.name}`,
    what: `Deployment ${k.liveName} (${shown(k.id)})`,
    id: k.id,
    built: withFileNote(k.name, k.built),
    header: [schemaComment(out), `Imported by plumb import from deployment ${shown(k.id)} on ${when}.`],
    liveName: k.liveName,
  }));
  if (organization)
    files.push({
      file: "organization-access.yaml",
      object: "OrganizationAccess",
      what: `OrganizationAccess of ${shown(organization.display_name)}`,
      id: organization.id,
      built: buildOrganizationManifest(organization),
      header: [
        schemaComment(out),
        `Imported by plumb import from organization ${shown(organization.id)} on ${when}.`,
      ],
    });
  return files;
}

/**
 * Each file's text, read back as plan reads it: one that validation refuses (a live value such as
 * a control character in a label) is said on stdout and not written. Written, it made the whole
 * repository fail validation: plan, apply and the controller stopped on it. Nor is one holding a
 * credential (credentials.ts): a repo_url with a token in it, or the run's own API key that a
 * server echoed into a field, went into git.
 */
export function valid(
  files: readonly ImportFile[],
  limits: { maxBytes: number; redact: (text: string) => string },
  stdout: ApplyIo["stdout"],
): Array<ImportFile & { text: string }> {
  const out: Array<ImportFile & { text: string }> = [];
  for (const f of files) {
    const text = formatManifest(f.built.manifest, f.header);
    const credential =
      credentialIn(f.built.manifest, limits.redact) ??
      (limits.redact(text) !== text ? "its header holds one of plumb's own credentials" : undefined);
    const error = credential === undefined ? importedFileError(text, f.file, limits.maxBytes) : undefined;
    if (credential !== undefined)
      stdout.write(
        `skipped ${f.what}: ${credential}, which import never writes to git; nothing is written for it\n`,
      );
    else if (error === undefined) out.push({ ...f, text });
    else
      stdout.write(
        `skipped ${f.what}: its manifest would not validate (${error}); nothing is written for it\n`,
      );
  }
  return out;
}
