import { stat } from "node:fs/promises";
import { join } from "node:path";
import { Command, Option } from "commander";
import { escapeControls, UsageError } from "../../errors.js";
import { loadManifests } from "../../manifest/load.js";
import { maxManifestBytesFrom } from "../../manifest/parse/parse.js";
import { escapeLines } from "../../manifest/format/format.js";
import { formatFileChanges } from "../../promote/file-changes.js";
import { formatPromotionJson, formatPromotionText } from "../../promote/format-promotion.js";
import { promotionScope } from "../../promote/promotion-pairs.js";
import { refusal, runPromotion } from "../../promote/run-promotion.js";
import type { SessionIo } from "../../reconcile/session.js";
import { resolveStatusDir } from "../../git/status/status-source.js";
import { settingsOf, withEnvironmentHint } from "../environments.js";
import { allowApiOriginOption, outputOption, targetOption } from "../options.js";
import { processIo } from "../process-io.js";

type Flags = {
  to: string;
  target: string[];
  dryRun?: boolean;
  write?: boolean;
  branch?: string;
  output: "text" | "json";
  statusDir?: string;
  statusBranch?: string;
  allowApiOrigin?: string[];
};

/**
 * `plumb promote [PATH] --to ENV`: the version each deployment runs in ENV's promotion.from copied
 * into its ENV override in git, once every gate holds (docs/environments.md, "Promotion"). Without
 * --write or --branch nothing is written: the diff is printed. Exit 1 when anything is blocked.
 */
export function promoteCommand(io: SessionIo = processIo()): Command {
  return new Command("promote")
    .description(
      "Copy the versions an environment's promotion.from runs into its overrides in git, once the gates hold (prints the diff unless --write or --branch)",
    )
    .argument("[path]", "directory of manifests holding the Environment documents", ".")
    .requiredOption("--to <env>", "the environment promoted to (its spec.promotion names the source)")
    .addOption(targetOption("promote only this deployment"))
    .option("--dry-run", "print the diff of the files and write nothing (the default)")
    .option("--write", "edit the manifest files in place (comments and layout kept)")
    .option("--branch <branch>", "commit the change on this new branch, with the evidence in its message")
    .addOption(outputOption(["text", "json"]))
    .addOption(new Option("--status-dir <dir>", "status stores' directory (default PATH/.plumb/status)"))
    .addOption(
      new Option(
        "--status-branch <branch>",
        "also read the source environment's records (its checks) from this branch, as apply --env writes them there",
      ),
    )
    .addOption(allowApiOriginOption())
    .action(async (path: string, flags: Flags) => {
      process.exitCode = await runPromote(path, flags, io);
    });
}

async function runPromote(path: string, flags: Flags, io: SessionIo): Promise<number> {
  if (flags.write && flags.branch !== undefined) throw new UsageError("--write and --branch: choose one");
  if (flags.dryRun && (flags.write || flags.branch !== undefined))
    throw new UsageError("--dry-run writes nothing: drop it, or drop --write / --branch");
  // A missing PATH is the load's path-not-found; one file is refused: the promotion edits and checks
  // the files of a directory (those above it hold the Environment documents it may run with).
  if ((await stat(path).catch(() => null))?.isFile())
    throw new UsageError(
      `${escapeControls(path)}: promote takes a directory (the manifests' or one above them), not one file; to promote one deployment, pass --target NAME`,
    );
  // A directory whose tree defines no Environment runs with those above it, as plan and apply do
  // (--to names one: whether or not its manifests name environments).
  const tree = await loadManifests(path, {
    maxBytes: maxManifestBytesFrom(io.env),
    environmentsAbove: true,
    environmentRequested: true,
  });
  const scope = promotionScope(tree, flags.to, flags.target);
  const from = scope.from.manifest.metadata.name;
  const settings = settingsOf(scope.from, path, io.env, flags);
  const statusDirs = resolveStatusDir({ root: path, statusDir: flags.statusDir });
  const statusDir = join(statusDirs, from);
  // The default store's ENV/: the stores above and below PATH are read too, as apply --env reads them.
  const nearby = flags.statusDir === undefined ? { statusDirOfEnvironment: true } : {};
  const to = scope.to.manifest.metadata.name;
  const mode = flags.write ? "write" : flags.branch !== undefined ? "branch" : "dry-run";
  const { report, changes } = await runPromotion({
    root: path,
    scope,
    mode,
    branch: flags.branch,
    source: {
      flags: { ...settings.flags, environment: from, statusDir, statusBranch: flags.statusBranch, ...nearby },
      io: { ...io, env: settings.env },
    },
    explain: {
      source: (error) => withEnvironmentHint(error, scope.from),
      target: (error) => withEnvironmentHint(error, scope.to),
    },
    // Read only for the deployments git already has at the source's version: are they running it?
    target: () => {
      const target = settingsOf(scope.to, path, io.env, flags);
      const statusDir = join(statusDirs, to);
      return {
        flags: { ...target.flags, environment: to, statusDir, statusBranch: flags.statusBranch, ...nearby },
        io: { ...io, env: target.env },
      };
    },
  });
  const diff = formatFileChanges(changes);
  if (flags.output === "json") io.stdout.write(formatPromotionJson({ ...report, ...(diff ? { diff } : {}) }));
  else {
    io.stdout.write(formatPromotionText(report, mode === "dry-run"));
    // The diff's lines are the manifests' (a block scalar's `::add-mask::` line as context).
    if (diff) io.stdout.write(`\n${escapeLines(diff)}`);
    if (report.ok) io.stdout.write(`${footer(report.mode, changes.length, report.commit, report.branch)}\n`);
  }
  if (!report.ok) throw refusal(report);
  return 0;
}

function footer(mode: string, files: number, commit?: string, branch?: string): string {
  if (files === 0)
    return "\nnothing to write: git already names the source's versions (a deployment not running it yet says so above)";
  if (mode === "write")
    return `\nwrote ${files} file(s); review them, then commit (plumb plan --env shows the change)`;
  if (mode === "branch")
    return `\ncommitted ${commit ?? ""} on branch ${branch ?? ""}; push it and open a pull request`;
  return "\ndry run: nothing written; --write edits the files, --branch NAME commits them on a new branch";
}
