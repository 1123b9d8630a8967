import { isDeepStrictEqual } from "node:util";
import { type ParsedDocument, problemAt } from "../../parse/parse.js";
import { isRecord } from "../rule-helpers.js";
import type { Problem, SourceLocation } from "../../types.js";

// Environments on one control plane (the same api_url, api_key and tenant_id, as written; a literal
// api_url as the client reads it, case, default port and trailing `/` aside) share its
// deployment names: a deployment's name there is its name plus the environment's name_suffix. Two
// deployments (or one in two environments) that come to the same name there would be one live
// deployment, each environment's apply changing what the other applied (and two controllers, or
// one reconciling both, undoing each other forever). Said by plumb validate, at the later name,
// whose Deployment is then left out as a duplicate name's is (the controller reconciles the rest).

type Environment = { name: string; suffix: string; connection: unknown };

/**
 * A literal URL as the client reads it (WHATWG: scheme and host in lower case, no default port, no
 * trailing `/`), so one control plane written two ways is one; anything else as written.
 */
const sameUrl = (value: unknown): unknown => {
  if (typeof value !== "string" || !URL.canParse(value)) return value;
  return new URL(value).href.replace(/\/+$/, "");
};

const environmentOf = (doc: ParsedDocument): Environment | undefined => {
  const metadata = isRecord(doc.value.metadata) ? doc.value.metadata : {};
  const spec = isRecord(doc.value.spec) ? doc.value.spec : {};
  if (typeof metadata.name !== "string") return undefined;
  const suffix = typeof spec.name_suffix === "string" ? spec.name_suffix : "";
  // The key too: on one URL, another key may reach another workspace.
  const connection = [sameUrl(spec.api_url), spec.api_key, spec.tenant_id ?? null];
  return { name: metadata.name, suffix, connection };
};

/** The environments a Deployment lists (metadata.environments); undefined: every environment. */
const listedEnvironments = (doc: ParsedDocument): string[] | undefined => {
  const metadata = isRecord(doc.value.metadata) ? doc.value.metadata : {};
  const listed = Array.isArray(metadata.environments) ? metadata.environments : [];
  const names = listed.filter((name): name is string => typeof name === "string");
  return names.length > 0 ? names : undefined;
};

/**
 * `names`: every Deployment's name (keyed lowercased, in reading order) and where it is; `naming`: the
 * Deployments that name environments (the others run in every environment).
 */
export function checkSharedControlPlaneNames(
  environmentDocs: readonly ParsedDocument[],
  naming: readonly ParsedDocument[],
  names: ReadonlyMap<string, { name: string; at: () => SourceLocation }>,
): Array<{ name: string; problem: Problem }> {
  // The first document of each name (a second one is a duplicate-name error already).
  const environments = environmentDocs
    .map(environmentOf)
    .filter((e) => e !== undefined)
    .filter((e, i, all) => all.findIndex((other) => other.name === e.name) === i);
  const shared = environments.filter((e) =>
    environments.some((other) => other !== e && isDeepStrictEqual(other.connection, e.connection)),
  );
  if (shared.length === 0) return [];
  const listed = new Map<string, string[] | undefined>();
  for (const doc of naming) {
    const metadata = isRecord(doc.value.metadata) ? doc.value.metadata : {};
    if (typeof metadata.name === "string") listed.set(metadata.name, listedEnvironments(doc));
  }
  const problems: Array<{ name: string; problem: Problem }> = [];
  const taken = new Map<string, { deployment: string; environment: Environment }>();
  for (const { name, at } of names.values()) {
    const runsIn = listed.get(name);
    for (const environment of shared) {
      if (runsIn !== undefined && !runsIn.includes(environment.name)) continue;
      const live = `${name}${environment.suffix}`;
      const key = `${JSON.stringify(environment.connection)}\n${live}`;
      const first = taken.get(key);
      if (!first) {
        taken.set(key, { deployment: name, environment });
        continue;
      }
      const other = first.deployment === name ? "it is in" : `deployment ${first.deployment} is in`;
      const message = `deployment ${name} in environment ${environment.name} is named ${live} on its control plane, as ${other} environment ${first.environment.name} (both environments have the same api_url, api_key and tenant_id): applying one would change the other's deployment; give the environments different name_suffix values, or rename one deployment`;
      const problem = problemAt(at(), "error", "environment-name-collision", "metadata.name", message);
      problems.push({ name, problem });
      break; // one problem per deployment
    }
  }
  return problems;
}

/** An environment as its settings resolve where the command runs: the control plane it reaches. */
export type ResolvedEnvironment = { name: string; suffix: string; url: string; tenant?: string; key: string };

/**
 * The first deployment name that two environments reaching one control plane as resolved (the same
 * URL, as the client reads it, tenant and key, however each was written: two variables holding
 * one URL) would both use there, or undefined. validate compares the settings as written; this
 * compares their values, which plan and apply read (src/cli/environments.ts).
 */
export function resolvedNameCollision(
  environments: readonly ResolvedEnvironment[],
  deployments: ReadonlyArray<{ name: string; environments: readonly string[] | undefined }>,
): { live: string; first: [string, string]; second: [string, string] } | undefined {
  const connectionOf = (e: ResolvedEnvironment) => JSON.stringify([sameUrl(e.url), e.tenant ?? null, e.key]);
  const shared = environments.filter((e) =>
    environments.some((other) => other !== e && connectionOf(other) === connectionOf(e)),
  );
  if (shared.length === 0) return undefined;
  const taken = new Map<string, [string, string]>();
  for (const deployment of deployments)
    for (const environment of shared) {
      if (deployment.environments && !deployment.environments.includes(environment.name)) continue;
      const live = `${deployment.name}${environment.suffix}`;
      const key = `${connectionOf(environment)}\n${live}`;
      const first = taken.get(key);
      if (first) return { live, first, second: [deployment.name, environment.name] };
      taken.set(key, [deployment.name, environment.name]);
    }
  return undefined;
}

/** resolvedNameCollision's answer as said to the user: both environments and the name, no value. */
export function resolvedCollisionMessage(
  collision: NonNullable<ReturnType<typeof resolvedNameCollision>>,
): string {
  const [[firstName, firstEnv], [secondName, secondEnv]] = [collision.first, collision.second];
  return `environments ${firstEnv} and ${secondEnv} reach the same control plane here (their api_url, api_key and tenant_id resolve to the same values, though written differently) and both name a deployment ${collision.live} there (deployment ${firstName} in ${firstEnv}, ${secondName} in ${secondEnv}): applying one would change the other's deployment, and a prune of one would delete it; give the environments different name_suffix values, or point one at its own control plane; nothing was sent`;
}

/** The Deployments of a tree as resolvedNameCollision reads them: name and environments, as written. */
export const deploymentsOfTree = (
  manifests: ReadonlyArray<{
    manifest: { kind: string; metadata: { name: string; environments?: string[] } };
  }>,
) =>
  manifests.flatMap(({ manifest }) =>
    manifest.kind === "Deployment"
      ? [{ name: manifest.metadata.name, environments: manifest.metadata.environments }]
      : [],
  );
