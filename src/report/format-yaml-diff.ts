import { createTwoFilesPatch } from "diff";
import { createColors } from "picocolors";
import type { LiveState } from "../diff/plan/build-plan.js";
import type { FieldChange, Plan, PlannedChange } from "../diff/plan/plan-types.js";
import { isObject, type JsonObject } from "../diff/values.js";
import { buildDeploymentManifest, buildOrganizationManifest } from "../import/build-manifest.js";
import { formatManifest } from "../import/format-manifest.js";
import { escapeLines } from "../manifest/format/format.js";
import type { Deployment, Organization } from "../schema/deployment.js";

// `plumb diff FILE`: each object of the file as a unified diff of YAML, live against what apply
// would make of it. Both sides go through the same renderer (`plumb import`'s): live as it is, and
// live with the plan's field changes applied, so only real changes show, never a difference of
// defaults or key order. Secrets are names only (values are never read back, nor printed); a
// changed value is said in a line under the diff. Pure.

/** Sets a dotted API path (`source_revision_config.image_uri`) on a copy. */
function withField(object: JsonObject, path: string, value: unknown): JsonObject {
  const [head, ...rest] = path.split(".");
  const copy: JsonObject = { ...object };
  if (rest.length === 0) copy[head!] = value;
  else
    copy[head!] = withField(isObject(copy[head!]) ? (copy[head!] as JsonObject) : {}, rest.join("."), value);
  return copy;
}

function applyFields(live: JsonObject, fields: readonly FieldChange[]): JsonObject {
  let out = live;
  for (const field of fields) {
    // Secrets are shown by name: the new side keeps names only.
    const value = field.sensitive
      ? (Array.isArray(field.new) ? (field.new as string[]) : []).map((name) => ({ name, value: "" }))
      : field.new;
    out = withField(out, field.field, value);
  }
  return out;
}

function render(kind: string, object: JsonObject | undefined): string {
  if (!object) return "";
  const built =
    kind === "Deployment"
      ? buildDeploymentManifest(object as unknown as Deployment)
      : buildOrganizationManifest(object as unknown as Organization);
  return formatManifest(built.manifest, []);
}

/** What the change turns live into, in the API's shape (a create: its request body). */
function desiredShape(change: PlannedChange, live: JsonObject | undefined): JsonObject | undefined {
  if (change.action === "create" && change.request) {
    const body = change.request.body;
    const secrets = Array.isArray(body.secrets) ? (body.secrets as { name: string }[]) : [];
    return {
      source_config: {},
      source_revision_config: {},
      ...body,
      secrets: secrets.map((s) => ({ name: s.name, value: "" })),
    };
  }
  return live ? applyFields(live, change.fields ?? []) : undefined;
}

export function formatYamlDiff(plan: Plan, live: LiveState, options: { color?: boolean } = {}): string {
  const c = createColors(options.color ?? false);
  const parts: string[] = [];
  for (const change of plan.changes) {
    const current =
      change.kind === "Deployment"
        ? (live.deployments.find((d) => d.name === change.name) as unknown as JsonObject | undefined)
        : (live.organization as unknown as JsonObject | undefined);
    const before = render(change.kind, current);
    const after = change.action === "refused" ? before : render(change.kind, desiredShape(change, current));
    const title = `${change.kind} ${change.name} (${change.file}:${change.line})`;
    if (change.action === "refused") {
      parts.push(`${c.red("!")} ${title}: refused, nothing would change\n`);
      continue;
    }
    if (before === after && change.changed_secrets.length === 0) {
      parts.push(`= ${title}: no changes\n`);
      continue;
    }
    const patch = createTwoFilesPatch(
      current ? `live/${change.kind}/${change.name}` : "/dev/null",
      change.file,
      before,
      after,
      undefined,
      undefined,
      { context: 3 },
    )
      .split("\n")
      .slice(1) // the "Index:"/"====" banner of jsdiff
      .filter((line) => !/^={10,}$/.test(line))
      // Live's values and the file's lines, printed where a CI runner reads workflow commands.
      .map(escapeLines)
      .map((line) =>
        line.startsWith("+") && !line.startsWith("+++")
          ? c.green(line)
          : line.startsWith("-") && !line.startsWith("---")
            ? c.red(line)
            : line.startsWith("@@")
              ? c.cyan(line)
              : line,
      )
      .join("\n");
    const secrets = (change.action === "create" ? [] : change.changed_secrets).map(
      (name) => `  secret ${name}: value changes (not shown)`,
    );
    parts.push([patch.trimEnd(), ...secrets].join("\n") + "\n");
  }
  return parts.join("\n");
}
