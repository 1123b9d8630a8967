// The per-environment spec of a Deployment: the environment's defaults, the deployment's spec and
// its override, each merged over the one below by JSON Merge Patch (RFC 7396: objects merge by
// key, any other value replaces, null removes), except `secrets`, merged by name. Pure.

export type Spec = Record<string, unknown>;

/** Which layer a secret of the merged list came from, and its index there. */
export type SecretOrigin = { layer: number; index: number };

const isRecord = (value: unknown): value is Spec =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * RFC 7396's MergePatch(target, patch), on copies. Every key is an own data property, whatever
 * its name: json-merge-patch stopped at a key named `__proto__`, `constructor` or `prototype` and
 * dropped it and every key after it in that object (annotations {a, constructor, b} resolved to
 * {a} in every environment, silently).
 */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return structuredClone(patch);
  const out: Spec = {};
  if (isRecord(target)) for (const [key, value] of Object.entries(target)) define(out, key, value);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else define(out, key, mergePatch(Object.hasOwn(out, key) ? out[key] : undefined, value));
  }
  return out;
}

/** Sets an own property (`out.__proto__ = v` would set the prototype instead). */
const define = (out: Spec, key: string, value: unknown) =>
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });

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
    spec = mergePatch(spec, rest) as Spec;
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
