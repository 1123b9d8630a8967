import { existsSync, lstatSync, statSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Command, Option } from "commander";
import { escapeControls, fileError, PlumbError, UsageError } from "../../errors.js";
import { replaceFileText } from "../../manifest/write/replace-file.js";
import {
  type BuiltManifest,
  buildDeploymentManifest,
  buildOrganizationManifest,
  nestsTooDeep,
} from "../../import/build-manifest.js";
import { formatManifest } from "../../import/format-manifest.js";
import { importedFileError } from "../../import/check-manifest.js";
import { maxManifestBytesFrom } from "../../manifest/parse/parse.js";
import { environmentImport, readRepository, refuseEnvironments } from "./import-environment.js";
import { refuseSharedFiles, withoutDefined } from "./import-defined.js";
import { openSession } from "../../reconcile/session.js";
import { type ApplyIo } from "../sync/apply.js";
import { runAdopt } from "./adopt.js";
import { forEachEnvironment } from "../environments.js";
import { addConnectionOptions, type ConnectionFlags, envOption } from "../options.js";
import { processIo } from "../process-io.js";
import { DEPLOYMENT_NAME_PATTERN } from "../../schema/constants.js";
import type { Deployment, Organization } from "../../schema/deployment.js";
import { MAX_NESTING } from "../../manifest/parse/yaml-shape.js";

type Flags = ConnectionFlags & {
  out: string;
  name: string[];
  organization?: boolean;
  force?: boolean;
  adopt?: boolean;
  env?: string[];
  /** Set by forEachEnvironment: the environment whose control plane is read (--env). */
  environment?: string;
};

/** `plumb import`: one manifest per live deployment (and the organization's access settings). */
export function importCommand(io: ApplyIo = processIo()): Command {
  const command = new Command("import")
    .description(
      "Write manifests for deployments that already exist live: NAME.yaml per deployment in --out, planning as a no-op (secrets become valueFrom: {env: NAME})",
    )
    .option("--out <dir>", "directory to write the manifests into (created if missing)", ".")
    .addOption(
      new Option("--name <name>", "import only this deployment (repeatable)")
        .argParser((value: string, all: string[] = []) => [...all, value])
        .default([], "every deployment"),
    )
    .option("--organization", "also write organization-access.yaml from the organization's SSO settings")
    .option("--force", "overwrite files that exist (default: refuse, writing nothing)")
    .addOption(envOption().default([], "none: a repository without environments"))
    .option(
      "--adopt",
      "then record the secrets' fingerprints from their env variables, as plumb adopt --yes does, so the first plan is a complete no-op",
    );
  return addConnectionOptions(command, "with --adopt: also commit the records to this branch").action(
    async (flags: Flags) => {
      if (!flags.env?.length) {
        process.exitCode = await runImport(flags, io);
        return;
      }
      if (flags.env.length > 1)
        throw new UsageError("import reads one environment's control plane: give --env once");
      // The Environment documents are read from --out, the repository the manifests go into.
      // (--out is not passed through: to forEachEnvironment it is plan's saved plan, refused there.)
      process.exitCode = await forEachEnvironment(flags.out, { ...flags, out: undefined }, io, (f, envIo) =>
        runImport({ ...f, out: flags.out }, { ...io, ...envIo }),
      );
    },
  );
}

/**
 * A live name becomes a file name, NAME.yaml in --out: one that is not a manifest's name (a path
 * separator, `..`, a space, a control character) is skipped, never written where it points.
 */
const MANIFEST_NAME = new RegExp(DEPLOYMENT_NAME_PATTERN);

/**
 * --out is a directory (made when missing): one that names a file is refused before any request.
 * The import read every deployment and then failed to mkdir it with a bare EEXIST (an internal
 * error, exit 70).
 */
function refuseFileAsOut(out: string): void {
  if (existsSync(out) && !statSync(out).isDirectory())
    throw new UsageError(
      `--out ${out} is a file: import writes one NAME.yaml per deployment into a directory; name a directory (made when missing)`,
    );
}

/** A server's text quoted, every control character escaped (C1 too: JSON.stringify keeps them). */
const shown = (text: string): string => escapeControls(JSON.stringify(text));

/** The live deployments whose names can be manifests'; each other one is said on stdout. */
function importable<T extends { id: string; name: string }>(live: T[], stdout: ApplyIo["stdout"]): T[] {
  for (const d of live.filter((d) => !MANIFEST_NAME.test(d.name)))
    stdout.write(
      `skipped deployment ${shown(d.name)} (${shown(d.id)}): not a manifest name (a letter first, then letters, digits and '-', at most 63 characters); nothing is written for it\n`,
    );
  return live.filter((d) => MANIFEST_NAME.test(d.name));
}

/**
 * Each deployment's manifest. One being deleted is said on stdout and skipped: its manifest would
 * have made the next apply create again what someone had just deleted. So is one that would nest
 * deeper than a manifest may (a server's free-form field, e.g. a volume's configMap). Written, that
 * overflowed the YAML writer's stack (an internal error, nothing written), and at 65 levels it
 * was written and then refused by validation (too-deep), the whole repository with it.
 */
function buildable(live: Deployment[], stdout: ApplyIo["stdout"]) {
  for (const d of live.filter((d) => d.status === "AWAITING_DELETE"))
    stdout.write(
      `skipped deployment ${d.name} (${shown(d.id)}): it is being deleted (AWAITING_DELETE); nothing is written for it\n`,
    );
  const built = live
    .filter((d) => d.status !== "AWAITING_DELETE")
    .map((d) => ({ liveName: d.name, id: d.id, built: buildDeploymentManifest(d) }));
  for (const b of built.filter((b) => nestsTooDeep(b.built.manifest)))
    stdout.write(
      `skipped deployment ${b.liveName} (${shown(b.id)}): its live fields nest more than ${MAX_NESTING} levels deep, which a manifest cannot hold; nothing is written for it\n`,
    );
  return built.filter((b) => !nestsTooDeep(b.built.manifest));
}

/** The editors' schema, relative to where the manifests go (as in examples/). */
function schemaComment(out: string): string[] {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const schema = join(dir, "schemas", "plumb.schema.json");
    if (existsSync(schema)) return [`yaml-language-server: $schema=${relative(resolve(out), schema)}`];
  }
  return [];
}

export async function runImport(flags: Flags, io: ApplyIo): Promise<number> {
  const out = flags.out;
  refuseFileAsOut(out);
  const maxBytes = maxManifestBytesFrom(io.env); // a bad setting is said before any request
  const tree = await readRepository(out);
  if (flags.environment === undefined) refuseEnvironments(out, tree);
  const session = await openSession(out, flags, io);
  const { ports, platform } = session.connect();
  const live = importable(await ports.controlPlane.listDeployments(), io.stdout);
  const missing = flags.name.filter((name) => !live.some((d) => d.name === name));
  if (missing.length > 0)
    throw new PlumbError("not-found", `no live deployment named ${missing.join(", ")}; nothing was written`, {
      exitCode: 1,
    });
  const named = flags.name.length > 0 ? live.filter((d) => flags.name.includes(d.name)) : live;
  const when = new Date(session.clock.now()).toISOString();
  const built = buildable(named, io.stdout);
  // With --env: into the repository's environments (docs/import.md), else one file per deployment.
  const kept =
    flags.environment === undefined
      ? built.map((b) => ({ ...b, name: b.liveName }))
      : await environmentImport(out, flags.environment, built, io.stdout);
  const organization = flags.organization ? await platform.getOrganization() : undefined;
  // An object the repository defines in another file is left alone (docs/import.md, "Safety").
  const wanted = withoutDefined(tree, importFiles(out, when, kept, organization), io.stdout);
  const files = valid(wanted, maxBytes, io.stdout);
  const chosen = named.filter((d) => files.some((f) => f.liveName === d.name));
  refuseSameFile(out, files);
  if (flags.force) refuseSharedFiles(tree, out, files);
  // Only once the control plane answered; a file on the way (--out a/b where a is a file) is said.
  await mkdir(out, { recursive: true }).catch((error: unknown) => {
    throw fileError("manifest-write-failed", out, error, "--out names the directory to write into");
  });
  refuseInTheWay(out, files, flags.force === true);
  for (const f of files) {
    await writeImported(join(out, f.file), f.text, flags.force === true);
    io.stdout.write(`wrote ${join(out, f.file)}: ${f.what}\n`);
    for (const note of f.built.notes) io.stdout.write(`  note: ${note}\n`);
  }
  io.stdout.write(`Import complete: ${files.length} file(s) written.\n`);
  if (!flags.adopt || chosen.length === 0) return 0;
  const target = chosen.map((d) => d.name);
  return runAdopt(out, { ...flags, target, yes: true, output: "text" }, io);
}

type ImportFile = {
  file: string;
  /** What the file defines, as import-defined.ts names it: "Deployment NAME", "OrganizationAccess". */
  object: string;
  what: string;
  built: BuiltManifest;
  header: string[];
  liveName?: string;
};

/** The file of each deployment to write (as `name`), and of the organization's settings when read. */
function importFiles(
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
function valid(
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

/**
 * Two objects for one file (a deployment named organization-access with --organization, two live
 * deployments of one name), or for names that differ only in case (Alpha and alpha): refused
 * before anything is written. The second write failed half-way through the import, or, with
 * --force, replaced the first's file; and files that differ only in case are one file on macOS
 * and Windows (a clone keeps one of them).
 */
function refuseSameFile(
  out: string,
  files: ReadonlyArray<{ file: string; what: string; object: string }>,
): void {
  const seen = new Map<string, { file: string; what: string; object: string }>();
  for (const f of files) {
    const first = seen.get(f.file.toLowerCase());
    if (first === undefined) {
      seen.set(f.file.toLowerCase(), f);
      continue;
    }
    const where =
      first.file === f.file
        ? `would both be written to ${join(out, f.file)}`
        : `would be written to ${join(out, first.file)} and ${join(out, f.file)}, one file where case does not count (macOS, Windows)`;
    const fix =
      first.object === f.object
        ? "the control plane lists two deployments of that name; rename or delete one there"
        : first.file === f.file
          ? "import the deployments without --organization, and the organization into another --out"
          : "import one of them with --name into another --out";
    throw new PlumbError("file-exists", `${first.what} and ${f.what} ${where}; nothing was written: ${fix}`, {
      exitCode: 1,
    });
  }
}

/**
 * All or nothing: a file in the way stops the import before anything is written; with --force, one
 * that is not a regular file (a symbolic link, a directory) does too. --force replaced a link's
 * target, wherever it pointed (../../.github/workflows/deploy.yml: outside --out), and a directory
 * or a dangling link failed half-way through the import, the files before it written.
 */
function refuseInTheWay(out: string, files: ReadonlyArray<{ file: string }>, force: boolean): void {
  const kindOf = (path: string) => lstatSync(path, { throwIfNoEntry: false });
  const inTheWay = files.map((f) => join(out, f.file)).filter((path) => kindOf(path) !== undefined);
  const plural = (paths: string[], one: string, many: string) => (paths.length === 1 ? one : many);
  if (inTheWay.length > 0 && !force)
    throw new PlumbError(
      "file-exists",
      `${inTheWay.join(", ")} already exist${plural(inTheWay, "s", "")}; nothing was written (--force overwrites)`,
      { exitCode: 1 },
    );
  const special = inTheWay.filter((path) => !kindOf(path)!.isFile());
  if (special.length > 0)
    throw new PlumbError(
      "file-exists",
      `${special.join(", ")} ${plural(special, "is not a regular file", "are not regular files")} (a symbolic link, a directory): --force replaces only regular files; nothing was written: move ${plural(special, "it", "them")} away first`,
      { exitCode: 1 },
    );
}

/**
 * One imported file, whole or not at all: a file in the way (--force) is replaced by a rename, a
 * new one removed when its write fails. Written in place, a full disk cut the user's file short
 * (its content lost) and failed as an internal error.
 */
async function writeImported(path: string, text: string, force: boolean): Promise<void> {
  const fail = (error: unknown) =>
    fileError("manifest-write-failed", path, error, "import writes into --out");
  if (force && existsSync(path))
    return replaceFileText(path, text, undefined).catch((error: unknown) => Promise.reject(fail(error)));
  await writeFile(path, text, { flag: "wx" }).catch(async (error: unknown) => {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") await rm(path, { force: true });
    throw fail(error);
  });
}
