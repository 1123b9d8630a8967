import { resolveEnvironment } from "../environment/resolve.js";
import { type SetEdit, setValues } from "../environment/set-values.js";
import { writeBackTarget } from "../environment/write-back.js";
import { UsageError } from "../errors.js";
import { loadManifests } from "../manifest/load.js";
import { readYamlDocuments } from "../manifest/parse/yaml-text.js";
import { nodeAt, scalarAt } from "../manifest/yaml-path.js";
import type { DeploymentManifest } from "../schema/manifest.js";

// drift --write in a repository with environments (docs/drift.md, "With environments"): each live
// value goes into the layer write-back.ts chooses (the environment's override, added in place
// when missing, or the base spec when no other environment resolves it), and every other
// environment's resolved manifests are rendered before and after: when any differs, the files
// are restored and nothing is written.

export type EnvironmentWrite = {
  environment: string;
  /** This environment's name_suffix: a resolved name is the written one with it. */
  suffix: string;
  /** Every environment the repository defines. */
  defined: string[];
  /** Every other environment's resolved manifests (and problems), as text to compare. */
  renderOthers(): Promise<string>;
};

/** The context of a drift --write of `environment` over the manifests of `path`. */
export async function loadEnvironmentWrite(
  path: string,
  environment: string,
  maxBytes: number,
  /** The command's rule for a directory (loadManifests' `environmentsAbove`); not the controller's. */
  environmentsAbove = false,
): Promise<EnvironmentWrite> {
  const tree = await loadManifests(path, { maxBytes, environmentsAbove, environmentRequested: true });
  const environments = tree.environments ?? [];
  const own = environments.find((e) => e.manifest.metadata.name === environment);
  if (!own) throw new UsageError(`unknown environment "${environment}"`);
  return {
    environment,
    suffix: own.manifest.spec.name_suffix ?? "",
    defined: environments.map((e) => e.manifest.metadata.name),
    renderOthers: async () => {
      const now = await loadManifests(path, { maxBytes, environmentsAbove, environmentRequested: true });
      const others = (now.environments ?? []).filter((e) => e.manifest.metadata.name !== environment);
      return JSON.stringify(
        others.map((e) => {
          const resolved = resolveEnvironment(now.manifests, e);
          return {
            environment: e.manifest.metadata.name,
            manifests: resolved.manifests.map((m) => m.manifest),
            problems: resolved.problems.map((p) => `${p.file}:${p.line} ${p.message}`),
          };
        }),
      );
    },
  };
}

type Edit = { kind: string; name: string; path: string[]; value: string | number | boolean };
type EnvironmentOutcome = {
  index: number;
  written: boolean;
  line: number;
  /** The YAML path written (environments.ENV.spec.… or spec.…). */
  into: string;
  reason?: string;
};

/** Sets each edit (path under spec, resolved name) in its layer of `text` (the file `file`); pure. */
export function editForEnvironment(
  text: string,
  edits: readonly Edit[],
  context: Pick<EnvironmentWrite, "environment" | "suffix" | "defined">,
  file = "manifest",
): { text: string; outcomes: EnvironmentOutcome[] } {
  const list = readYamlDocuments(text, file);
  const writtenName = (name: string) =>
    context.suffix && name.endsWith(context.suffix) ? name.slice(0, -context.suffix.length) : name;
  const sets: SetEdit[] = [];
  const into: string[] = [];
  for (const edit of edits) {
    const name = writtenName(edit.name);
    const doc = list.find(
      (d) => scalarAt(d, ["kind"]) === edit.kind && scalarAt(d, ["metadata", "name"]) === name,
    );
    const manifest = (doc?.toJS() ?? { metadata: { name } }) as DeploymentManifest;
    const target = writeBackTarget(manifest, context.environment, context.defined, edit.path.slice(1));
    sets.push({ kind: edit.kind, name, path: target.path, value: edit.value });
    into.push(target.path.join("."));
  }
  const result = setValues(text, sets, file);
  const outcomes = result.outcomes.map((o, index) => ({
    index,
    written: o.written,
    line: o.written ? lineOf(result.text, o.edit, file) : 0,
    into: into[index]!,
    ...(o.reason ? { reason: o.reason } : {}),
  }));
  return { text: result.text, outcomes };
}

/** The line (1-based) of the value an edit set. */
function lineOf(text: string, edit: SetEdit, file: string): number {
  const list = readYamlDocuments(text, file);
  const doc = list.find(
    (d) => scalarAt(d, ["kind"]) === edit.kind && scalarAt(d, ["metadata", "name"]) === edit.name,
  );
  const node = doc ? nodeAt(doc, edit.path) : undefined;
  const offset = node?.range?.[0] ?? 0;
  return text.slice(0, offset).split("\n").length;
}
