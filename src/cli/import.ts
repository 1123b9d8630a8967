import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Command, Option } from "commander";
import { PlumbError } from "../errors.js";
import {
  type BuiltManifest,
  buildDeploymentManifest,
  buildOrganizationManifest,
} from "../import/build-manifest.js";
import { formatManifest } from "../import/format-manifest.js";
import { openSession } from "../reconcile/session.js";
import { type ApplyIo } from "./apply.js";
import { runAdopt } from "./adopt.js";
import { addConnectionOptions, type ConnectionFlags } from "./options.js";
import { processIo } from "./process-io.js";

type Flags = ConnectionFlags & {
  out: string;
  name: string[];
  organization?: boolean;
  force?: boolean;
  adopt?: boolean;
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
        .default([]),
    )
    .option("--organization", "also write organization-access.yaml from the organization's SSO settings")
    .option("--force", "overwrite files that exist (default: refuse, writing nothing)")
    .option(
      "--adopt",
      "then record the secrets' fingerprints from their env variables, as plumb adopt --yes does, so the first plan is a complete no-op",
    );
  return addConnectionOptions(command, "with --adopt: also commit the records to this branch").action(
    async (flags: Flags) => {
      process.exitCode = await runImport(flags, io);
    },
  );
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
  const session = await openSession(out, flags, io);
  const { ports, platform } = session.connect();
  const live = await ports.controlPlane.listDeployments();
  const missing = flags.name.filter((name) => !live.some((d) => d.name === name));
  if (missing.length > 0)
    throw new PlumbError("not-found", `no live deployment named ${missing.join(", ")}; nothing was written`, {
      exitCode: 1,
    });
  const chosen = flags.name.length > 0 ? live.filter((d) => flags.name.includes(d.name)) : live;
  const when = new Date(session.clock.now()).toISOString();
  const files: Array<{ file: string; what: string; built: BuiltManifest; header: string[] }> = chosen.map(
    (d) => ({
      file: `${d.name}.yaml`,
      what: `Deployment ${d.name} (${d.id})`,
      built: buildDeploymentManifest(d),
      header: [...schemaComment(out), `Imported by plumb import from deployment ${d.id} on ${when}.`],
    }),
  );
  if (flags.organization) {
    const organization = await platform.getOrganization();
    files.push({
      file: "organization-access.yaml",
      what: `OrganizationAccess of ${organization.display_name}`,
      built: buildOrganizationManifest(organization),
      header: [
        ...schemaComment(out),
        `Imported by plumb import from organization ${organization.id} on ${when}.`,
      ],
    });
  }
  await mkdir(out, { recursive: true }); // only once the control plane answered
  // All or nothing: a file in the way stops the import before anything is written.
  const existing = files.filter((f) => existsSync(join(out, f.file))).map((f) => join(out, f.file));
  if (existing.length > 0 && !flags.force)
    throw new PlumbError(
      "file-exists",
      `${existing.join(", ")} already exist${existing.length === 1 ? "s" : ""}; nothing was written (--force overwrites)`,
      { exitCode: 1 },
    );
  for (const f of files) {
    await writeFile(join(out, f.file), formatManifest(f.built.manifest, f.header), {
      flag: flags.force ? "w" : "wx",
    });
    io.stdout.write(`wrote ${join(out, f.file)}: ${f.what}\n`);
    for (const note of f.built.notes) io.stdout.write(`  note: ${note}\n`);
  }
  io.stdout.write(`Import complete: ${files.length} file(s) written.\n`);
  if (!flags.adopt || chosen.length === 0) return 0;
  const target = chosen.map((d) => d.name);
  return runAdopt(out, { ...flags, target, yes: true, output: "text" }, io);
}
