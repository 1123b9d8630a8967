import { availableParallelism } from "node:os";
import pLimit from "p-limit";
import { type DerivedAhead, deriveSetAhead } from "../../diff/secrets/secret-fingerprint.js";
import type { ParsedDocument } from "../../manifest/parse.js";
import type { ObjectStatus } from "../../status/status-types.js";

// Plan's secret fingerprint checks (one salted scrypt per deployment with recorded secrets) were
// started only after every manifest was parsed, validated and resolved, and then were most of the
// plan. Here each deployment's whole-list check starts as soon as its file is parsed, on libuv's
// threadpool, while the main thread parses the rest: the two cores work at once. The values are a
// guess (literal values and environment variables, as secrets.ts resolves them, before validation);
// the check after resolution awaits a result only when its exact input was started here.

type Secret = { name: string; value: string };

/** The secrets of a parsed Deployment as resolution will give them; undefined when any is not simple. */
function guessSecrets(value: Record<string, unknown>, env: NodeJS.ProcessEnv): Secret[] | undefined {
  const spec = value.spec as { secrets?: unknown } | undefined;
  if (!Array.isArray(spec?.secrets)) return undefined;
  const secrets: Secret[] = [];
  for (const entry of spec.secrets as unknown[]) {
    const { name, value: literal, valueFrom } = (entry ?? {}) as Record<string, unknown>;
    const from = (valueFrom ?? {}) as Record<string, unknown>;
    const resolved = typeof from.env === "string" ? env[from.env] : literal;
    if (typeof name !== "string" || typeof resolved !== "string" || resolved === "") return undefined;
    secrets.push({ name, value: resolved });
  }
  return secrets;
}

/**
 * What loadManifests' `onParsed` calls to start the checks, and what the checks look results up in.
 * Up to four in flight (libuv's default pool): the pool always has one queued while loading yields.
 */
export function fingerprintsAhead(
  recorded: (kind: string, name: string) => ObjectStatus | undefined,
  env: NodeJS.ProcessEnv,
): { ahead: DerivedAhead; onParsed: (documents: readonly ParsedDocument[]) => void } {
  const ahead: DerivedAhead = new Map();
  const limit = pLimit(Math.max(2, Math.min(4, availableParallelism() * 2)));
  const onParsed = (documents: readonly ParsedDocument[]) => {
    for (const { value } of documents) {
      const name = (value.metadata as { name?: unknown } | undefined)?.name;
      if (value.kind !== "Deployment" || typeof name !== "string") continue;
      const fingerprints = recorded("Deployment", name)?.secret_fingerprints;
      const secrets = fingerprints ? guessSecrets(value, env) : undefined;
      if (fingerprints && secrets) deriveSetAhead(ahead, fingerprints, secrets, limit);
    }
  };
  return { ahead, onParsed };
}
