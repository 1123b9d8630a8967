import { Command } from "commander";
import { formatRender, type RenderedEnvironment } from "../../environment/format-render.js";
import { resolveTree } from "../../environment/resolve-tree.js";
import { selectEnvironments } from "../../environment/select.js";
import { formatProblems } from "../../manifest/format/format.js";
import { loadManifests, noManifests } from "../../manifest/load.js";
import { maxManifestBytesFrom } from "../../manifest/parse/parse.js";
import { sortProblems } from "../../manifest/validate.js";
import { selectTargets } from "../../reconcile/plan/targets.js";
import { inPromotionOrder } from "../environments.js";
import { envOption, targetOption } from "../options.js";

type Output = { write(text: string): unknown };

/**
 * `plumb render [PATH] --env NAME [--target NAME]`: each environment's deployments as plain
 * `kind: Deployment` YAML, merged from defaults, spec and overrides (docs/environments.md). Reads no
 * secret and calls no API; exit 1 (problems on stderr) when a resolved manifest is invalid.
 */
export function renderCommand(stdout: Output = process.stdout, stderr: Output = process.stderr): Command {
  return new Command("render")
    .description("Print the manifests of each environment as plan compares them: plain kind: Deployment YAML")
    .argument("[path]", "directory (or file) of manifests", ".")
    .addOption(envOption())
    .addOption(targetOption("render only this object"))
    .action(async (path: string, flags: { env: string[]; target: string[] }) => {
      const tree = await loadManifests(path, {
        maxBytes: maxManifestBytesFrom(process.env),
        parallel: true,
        environmentsAbove: true,
        environmentRequested: flags.env.length > 0,
      });
      // An Environment document that failed validation is not among those defined: --env naming it
      // gets the files' problems, not "unknown environment".
      const defined = new Set(tree.environments?.map((e) => e.manifest.metadata.name));
      if (tree.problems.some((p) => p.severity === "error") && flags.env.some((n) => !defined.has(n))) {
        stderr.write(`${formatProblems(sortProblems(tree.problems))}\n`);
        process.exitCode = 1;
        return;
      }
      // In promotion order, as plan and apply run them (docs/environments.md "Order and stopping").
      const environments = inPromotionOrder(selectEnvironments(tree.environments, flags.env));
      const rendered: RenderedEnvironment[] = [];
      let problems = tree.problems;
      if (environments.length === 0) {
        rendered.push({ environment: null, manifests: selectTargets(tree.manifests, flags.target) });
      } else {
        problems = [];
        for (const environment of environments) {
          const name = environment.manifest.metadata.name;
          const resolved = resolveTree(tree, name, flags.target);
          problems = [...problems, ...resolved.problems.filter((p) => !problems.includes(p))];
          rendered.push({ environment: name, manifests: resolved.selected });
        }
      }
      if (problems.length > 0) stderr.write(`${formatProblems(sortProblems(problems))}\n`);
      if (problems.some((p) => p.severity === "error")) {
        process.exitCode = 1;
        return;
      }
      if (tree.manifests.length === 0) throw noManifests(path);
      stdout.write(formatRender(rendered));
    });
}
