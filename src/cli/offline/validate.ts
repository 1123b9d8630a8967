import { stat } from "node:fs/promises";
import { dirname } from "node:path";
import { Command, Option } from "commander";
import { formatGithubAnnotations } from "../../manifest/format/format-github.js";
import { formatSarif } from "../../manifest/format/format-sarif.js";
import { countProblems, formatProblems, problemsToJson } from "../../manifest/format/format.js";
import { maxManifestBytesFrom } from "../../manifest/parse/parse.js";
import { loadManifests, noManifests } from "../../manifest/load.js";
import { checkSourceEntries } from "../../manifest/source/source-check.js";
import { envOption, PLUMB_VERSION } from "../options.js";
import { environmentProblems } from "./validate-environments.js";
import { sortProblems } from "../../manifest/validate.js";
import { findEmptiedNearRoot } from "../../reconcile/prune/prune-plan.js";
import { repositoryPaths } from "../report-context.js";

export type Output = { write(text: string): unknown };

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** `plumb validate [PATH]`: schema and rule checks; exit 1 when any error (warnings pass). */
export function validateCommand(stdout: Output = process.stdout): Command {
  return new Command("validate")
    .description("Check every plumb manifest under PATH: schema, rules of the control plane, duplicates")
    .argument("[path]", "directory (or file) of manifests", ".")
    .addOption(
      new Option(
        "-o, --output <format>",
        "output format; github: GitHub Actions annotations on the pull request's lines; sarif: a SARIF 2.1.0 log for code scanning",
      )
        .choices(["text", "json", "github", "sarif"])
        .default("text"),
    )
    .addOption(envOption())
    .action(
      async (path: string, options: { output: "text" | "json" | "github" | "sarif"; env: string[] }) => {
        const loaded = await loadManifests(path, {
          maxBytes: maxManifestBytesFrom(process.env),
          parallel: true,
          environmentsAbove: true,
          environmentRequested: options.env.length > 0,
        });
        const { manifests } = loaded;
        // A file the status store says held managed objects and that now defines none (prune-plan.ts).
        const emptied = await findEmptiedNearRoot(path, { objects: manifests, problems: loaded.problems });
        // What an internal_source upload must never hold (a link out of its directory, into a .git).
        const isFile = await stat(path).then(
          (info) => info.isFile(),
          () => false,
        );
        const root = isFile ? dirname(path) : path;
        const extra = [
          ...emptied,
          ...(await checkSourceEntries(manifests, root)),
          // Each environment's merged deployments, validated again (docs/environments.md).
          ...environmentProblems(loaded, options.env),
        ];
        const problems = extra.length > 0 ? sortProblems([...loaded.problems, ...extra]) : loaded.problems;
        const { errors, warnings } = countProblems(problems);
        if (options.output === "json") {
          stdout.write(`${JSON.stringify(problemsToJson(problems), null, 2)}\n`);
        } else if (options.output === "sarif") {
          const tool = { name: "plumb", version: PLUMB_VERSION };
          stdout.write(`${formatSarif(problems, await repositoryPaths(path, process.env), tool)}\n`);
        } else {
          if (options.output === "github" && problems.length > 0)
            stdout.write(`${formatGithubAnnotations(problems, await repositoryPaths(path, process.env))}\n`);
          else if (problems.length > 0) stdout.write(`${formatProblems(problems)}\n`);
          const summary = `${plural(manifests.length, "valid manifest")}, ${plural(errors, "error")}, ${plural(warnings, "warning")}`;
          stdout.write(`${summary}\n`);
        }
        if (manifests.length === 0 && errors === 0) throw noManifests(path);
        process.exitCode = errors > 0 ? 1 : 0;
      },
    );
}
