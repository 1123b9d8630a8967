import type { ControllerStatusJson, EnvironmentStatusJson } from "../controller-types.js";
import type { EnvironmentClaim } from "./environment-claim.js";

// GET /status of a controller of environments: the objects, problems and queue of the environments
// this replica leads, each object with its `environment`, and every environment's role here. Pure.

export function environmentsStatus(parts: {
  claims: readonly EnvironmentClaim[];
  source: { kind: string; location: string; commit(): string | null };
  replicas: { self: string; live(): number };
  share: () => number;
  /** The problem of an environment whose document in git is invalid (environment-roster.ts). */
  invalid: (environment: string) => string | undefined;
}): ControllerStatusJson {
  const led = parts.claims.flatMap((c) => {
    const store = c.role() === "leader" ? c.store() : undefined;
    return store ? [{ claim: c, store, json: store.status() }] : [];
  });
  const environments: EnvironmentStatusJson[] = parts.claims.map((c) => {
    const mine = led.find((l) => l.claim === c);
    return {
      environment: c.name,
      role: c.role(),
      ...(c.role() !== "leader" && c.leader() ? { leader: c.leader() } : {}),
      ...(c.error() ? { error: c.error() } : {}),
      ...(parts.invalid(c.name) ? { invalid: parts.invalid(c.name) } : {}),
      ready: mine ? mine.store.loaded() : false,
      settled: mine?.json.settled ?? false,
      objects: mine?.json.objects.length ?? 0,
    };
  });
  const invalid = new Map<string, ControllerStatusJson["invalid"][number]>();
  for (const { json } of led) for (const i of json.invalid) invalid.set(JSON.stringify(i), i);
  return {
    ready: led.length > 0 && led.every((l) => l.store.loaded()),
    settled: led.length > 0 && led.every((l) => l.json.settled),
    source: { kind: parts.source.kind, location: parts.source.location, commit: parts.source.commit() },
    objects: led.flatMap((l) => l.json.objects.map((o) => ({ ...o, environment: l.claim.name }))),
    invalid: [...invalid.values()],
    queue: led.reduce(
      (sum, { json }) => ({
        pending: sum.pending + json.queue.pending,
        running: sum.running + json.queue.running,
        backingOff: sum.backingOff + json.queue.backingOff,
      }),
      { pending: 0, running: 0, backingOff: 0 },
    ),
    environments,
    replicas: { self: parts.replicas.self, live: parts.replicas.live(), share: parts.share() },
  };
}
