import mergePatch from "json-merge-patch";

// The per-environment spec of a Deployment: the environment's defaults, the deployment's spec and
// its override, each merged over the one below by JSON Merge Patch (RFC 7396: objects merge by
// key, any other value replaces, null removes), except `secrets`, merged by name. Pure.

export type Spec = Record<string, unknown>;

/** Which layer a secret of the merged list came from, and its index there. */
export type SecretOrigin = { layer: number; index: number };

const isRecord = (value: unknown): value is Spec =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const secretsOf = (spec: Spec): unknown[] | null | undefined =>
  Array.isArray(spec.secrets) ? spec.secrets : spec.secrets === null ? null : undefined;

/**
 * Merges `layers` (lowest first) into one spec; `origins[i]` says where secret i came from.
 * The inputs are not changed (the library edits its target, so it is given a copy).
 */
export function mergeSpecs(layers: readonly Spec[]): { spec: Spec; secretOrigins: SecretOrigin[] } {
  let spec: Spec = {};
  const secrets = new Map<string, { secret: unknown; origin: SecretOrigin }>();
  let anySecrets = false;
  layers.forEach((layer, index) => {
    const { secrets: _ignored, ...rest } = layer;
    spec = mergePatch.apply<Spec>(spec, structuredClone(rest));
    const list = secretsOf(layer);
    if (list === null) secrets.clear(); // `secrets: null` removes the ones below
    if (!list) return;
    anySecrets = true;
    list.forEach((secret, i) => {
      const name = isRecord(secret) && typeof secret.name === "string" ? secret.name : `#${index}.${i}`;
      // A replaced secret keeps its place in the list; a new one is added at the end.
      secrets.set(name, { secret: structuredClone(secret), origin: { layer: index, index: i } });
    });
  });
  const merged = [...secrets.values()];
  if (anySecrets && merged.length > 0) spec.secrets = merged.map((m) => m.secret);
  return { spec, secretOrigins: merged.map((m) => m.origin) };
}

/** Labels: the environment's defaults under the deployment's own (which win). */
export function mergeLabels(
  defaults: Record<string, string> | undefined,
  own: Record<string, string> | undefined,
): Record<string, string> | undefined {
  if (!defaults && !own) return undefined;
  return { ...defaults, ...own };
}
