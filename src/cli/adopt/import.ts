import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { Command, Option } from "commander";
import { fileError, PlumbError, UsageError } from "../../errors.js";
import { maxManifestBytesFrom } from "../../manifest/parse/parse.js";
import { environmentImport, readRepository, refuseEnvironments } from "./import-environment.js";
import { refuseSharedFiles, withoutDefined, withoutManagedNearby } from "./import-defined.js";
import { openSession } from "../../reconcile/session.js";
import { type ApplyIo } from "../sync/apply.js";
import { runAdopt } from "./adopt.js";
import { forEachEnvironment } from "../environments.js";
import { addConnectionOptions, type ConnectionFlags, envOption } from "../options.js";
import { processIo } from "../process-io.js";
import { buildable, importable } from "./import-live.js";
import { importFiles, valid } from "./import-files.js";
import { refuseFileAsOut, refuseInTheWay, refuseSameFile, writeImported } from "./import-write.js";

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

export async function runImport(flags: Flags, io: ApplyIo): Promise<number> {
  const out = flags.out;
  refuseFileAsOut(out);
  const maxBytes = maxManifestBytesFrom(io.env); // a bad setting is said before any request
  const tree = await readRepository(out, maxBytes, flags.environment !== undefined);
  if (flags.environment === undefined) await refuseEnvironments(out, tree, maxBytes, io.stderr);
  const session = await openSession(out, flags, io);
  const { ports, platform } = session.connect();
  // What a server sent is printed with the run's own secrets (its API key, tokens) redacted.
  const stdout = { write: (text: string) => io.stdout.write(session.redactor.redact(text)) };
  const listed = await ports.controlPlane.listDeployments();
  const missing = flags.name.filter((name) => !listed.some((d) => d.name === name));
  if (missing.length > 0)
    throw new PlumbError("not-found", `no live deployment named ${missing.join(", ")}; nothing was written`, {
      exitCode: 1,
    });
  // --name first: only what was asked for is said skipped (a name that exists but cannot be a
  // manifest's is skipped with its reason, not called missing).
  const named = importable(
    flags.name.length > 0 ? listed.filter((d) => flags.name.includes(d.name)) : listed,
    stdout,
  );
  const when = new Date(session.clock.now()).toISOString();
  const built = buildable(named, stdout);
  // With --env: into the repository's environments (docs/import.md), else one file per deployment.
  const kept =
    flags.environment === undefined
      ? built.map((b) => ({ ...b, name: b.liveName }))
      : await environmentImport(out, flags.environment, built, stdout);
  const organization = flags.organization ? await platform.getOrganization() : undefined;
  // An object the repository defines in another file is left alone (docs/import.md, "Safety").
  const planned = importFiles(out, when, kept, organization);
  // So is one plumb applies from another directory (a status store nearby records it).
  const where = { out, stdout };
  const wanted = withoutDefined(tree, withoutManagedNearby(tree, planned, session.appliedNearby, where), {
    force: flags.force === true,
    stdout,
  });
  const files = valid(wanted, { maxBytes, redact: (text) => session.redactor.redact(text) }, stdout);
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
    stdout.write(`wrote ${join(out, f.file)}: ${f.what}\n`);
    for (const note of f.built.notes) stdout.write(`  note: ${note}\n`);
  }
  stdout.write(`Import complete: ${files.length} file(s) written.\n`);
  if (!flags.adopt || chosen.length === 0) return 0;
  const target = chosen.map((d) => d.name);
  return runAdopt(out, { ...flags, target, yes: true, output: "text" }, io);
}
