import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildPlan } from "../../src/diff/plan/build-plan.js";
import { fillResourceDefaults } from "../../src/diff/resource-spec.js";
import { fingerprintSecrets, type SecretFingerprints } from "../../src/diff/secrets/secret-fingerprint.js";
import type { JsonObject } from "../../src/diff/values.js";
import { type Deployment, MASKED_SECRET_VALUE } from "../../src/schema/deployment.js";
import type { DeploymentSpec } from "../../src/schema/manifest.js";
import { patchOnServer, recordOf, ServerRefused, serverView } from "../control-plane/support/server-patch.js";
import { desiredDeployment, liveDeployment } from "./helpers.js";

// For random live/desired pairs, with the local control plane's own PATCH rules (its schema,
// checks, planPatch and store; no model of them): the planned body is accepted and converges
// (a second plan is a noop), and every field of the body is needed (minimality).

const LISTENER = "22222222-2222-4222-8222-222222222222";
const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const cpu = fc.constantFrom(0.1, 0.25, 0.35, 0.4, 1, 1.05, 2);
const resourceSpec = fc.record(
  {
    cpu: opt(cpu),
    cpu_limit: opt(cpu),
    memory_mb: opt(fc.constantFrom(256, 512, 1024)),
    min_scale: opt(fc.integer({ min: 1, max: 3 })),
    queue_min_scale: opt(fc.integer({ min: 1, max: 3 })),
    redis_memory_mb: opt(fc.constantFrom(128, 256)),
    labels: opt(fc.dictionary(fc.constantFrom("a", "b"), fc.constantFrom("x", "y"))),
  },
  { requiredKeys: [] },
);
const secretNames = fc.subarray(["A", "B", "C"]);
const secretValue = fc.constantFrom("v1", "v2");
const secretRefs = opt(
  fc.subarray([
    { name: "R1", secret_name: "s", secret_key: "k" },
    { name: "R2", secret_name: "s", secret_key: "k2" },
  ]),
);

type Case = { live: Deployment; spec: DeploymentSpec; fingerprints: SecretFingerprints | undefined };

const containerCase: fc.Arbitrary<Case> = fc
  .record({
    liveImage: fc.constantFrom("img:1", "img:2"),
    liveUrl: opt(fc.constantFrom("https://a", "https://b")),
    liveRs: opt(resourceSpec),
    liveRsFilled: fc.boolean(),
    liveSecrets: fc.dictionary(fc.constantFrom("A", "B", "C"), secretValue),
    recorded: fc.boolean(),
    liveRefs: secretRefs,
    liveNs: opt(fc.constantFrom("ns", "ns2")),
    ns: opt(fc.constantFrom<string | null>("ns", "ns2", null)),
    image: opt(fc.constantFrom("img:1", "img:2")),
    url: opt(fc.constantFrom("https://a", "https://b")),
    rs: opt(resourceSpec),
    secrets: opt(fc.tuple(secretNames, fc.array(secretValue, { minLength: 3, maxLength: 3 }))),
    refs: secretRefs,
  })
  .map((r): Case => {
    const liveSecrets = Object.entries(r.liveSecrets).map(([name, value]) => ({ name, value }));
    const stored = r.liveRs && (r.liveRsFilled ? fillResourceDefaults(r.liveRs) : r.liveRs);
    const live = liveDeployment({
      name: "p",
      source: "external_container",
      source_config: {
        listener_id: LISTENER,
        ...(r.liveNs ? { listener_config: { k8s_namespace: r.liveNs } } : {}),
        ...(r.liveUrl ? { custom_url: r.liveUrl } : {}),
        ...(stored ? { resource_spec: stored } : {}),
      },
      source_revision_config: { image_uri: r.liveImage },
      secrets: liveSecrets.map(({ name }) => ({ name, value: MASKED_SECRET_VALUE })),
      secret_references: r.liveRefs ?? null,
    });
    const sourceConfig: JsonObject = { listener_id: LISTENER };
    if (r.url) sourceConfig.custom_url = r.url;
    if (r.rs) sourceConfig.resource_spec = r.rs;
    if (r.ns !== undefined) sourceConfig.listener_config = { k8s_namespace: r.ns };
    const spec: DeploymentSpec = {
      source: "external_container",
      source_config: sourceConfig,
      ...(r.image ? { source_revision_config: { image_uri: r.image } } : {}),
      ...(r.secrets
        ? { secrets: r.secrets[0].map((name, i) => ({ name, value: r.secrets![1][i] ?? "v1" })) }
        : {}),
      ...(r.refs ? { secret_references: r.refs } : {}),
    };
    return {
      live: serverView(recordOf(live)),
      spec,
      fingerprints: r.recorded ? fingerprintSecrets(liveSecrets, "salt") : undefined,
    };
  });

const gitCase: fc.Arbitrary<Case> = fc
  .record({
    liveRef: fc.constantFrom("main", "dev"),
    liveBuild: opt(fc.boolean()),
    liveInstall: opt(fc.constantFrom("npm ci", "pnpm i")),
    ref: opt(fc.constantFrom("main", "dev")),
    path: opt(fc.constantFrom("langgraph.json", "graph/langgraph.json")),
    build: opt(fc.boolean()),
    install: opt(fc.constantFrom("npm ci", "pnpm i")),
    buildCommand: opt(fc.constantFrom("make", "npm run build")),
  })
  .map((r): Case => ({
    live: asServed({
      name: "g",
      source: "gitrepo",
      source_config: {
        repo_url: "https://git/x",
        custom_url: "https://server",
        ...(r.liveBuild === undefined ? {} : { build_on_push: r.liveBuild }),
        ...(r.liveInstall ? { install_command: r.liveInstall } : {}),
      },
      source_revision_config: {
        repo_ref: r.liveRef,
        graph_config_path: "langgraph.json",
        repo_commit_sha: "abc",
      },
    }),
    spec: {
      source: "gitrepo",
      source_config: {
        repo_url: "https://git/x",
        custom_url: "https://ignored",
        ...(r.build === undefined ? {} : { build_on_push: r.build }),
        ...(r.install ? { install_command: r.install } : {}),
        ...(r.buildCommand ? { build_command: r.buildCommand } : {}),
      },
      source_revision_config: {
        ...(r.ref ? { repo_ref: r.ref } : {}),
        ...(r.path ? { graph_config_path: r.path } : {}),
      },
      revision_source: "gitrepo",
    },
    fingerprints: undefined,
  }));

const asServed = (fields: Parameters<typeof liveDeployment>[0]) =>
  serverView(recordOf(liveDeployment(fields)));

const anyCase = fc.oneof(containerCase, gitCase);

function planOne({ live, spec, fingerprints }: Case) {
  const desired = desiredDeployment(live.name, spec);
  return buildPlan({ desired: [desired], live: { deployments: [live] }, fingerprints: () => fingerprints })
    .changes[0]!;
}

/** What the server holds after the body, and the fingerprints apply records for it. */
function afterApply(c: Case, body: JsonObject): Case {
  const secrets = body.secrets as { name: string; value: string }[] | undefined;
  return {
    ...c,
    live: patchOnServer(c.live, body),
    fingerprints: secrets ? fingerprintSecrets(secrets, "salt2") : c.fingerprints,
  };
}

/** What the plan refuses, the server refuses too: each refused field sent alone, as desired. */
function expectServerRefuses(c: Case, errors: { field: string }[]) {
  expect(errors.length).toBeGreaterThan(0);
  for (const { field } of errors) {
    const path = field.split(".");
    const body: JsonObject = {};
    let from = c.spec as unknown as JsonObject;
    let to = body;
    for (const key of path.slice(0, -1)) {
      from = from[key] as JsonObject;
      to = to[key] = {};
    }
    const leaf = path.at(-1)!;
    to[leaf] = from[leaf]!;
    let refusal: unknown;
    try {
      patchOnServer(c.live, body);
    } catch (error) {
      refusal = error;
    }
    expect(refusal, `the server accepts ${JSON.stringify(body)}`).toBeInstanceOf(ServerRefused);
    expect((refusal as ServerRefused).status, field).toBe(400);
  }
}

function withoutField(body: JsonObject, path: string[]): JsonObject {
  const copy = structuredClone(body);
  const [head, leaf] = path as [string, string | undefined];
  if (leaf === undefined) delete copy[head];
  else {
    const section = copy[head] as JsonObject;
    delete section[leaf];
    if (Object.keys(section).length === 0) delete copy[head];
  }
  return copy;
}

describe("plan properties", () => {
  it("converges: the server accepts the body (and refuses what the plan refuses); a second plan is a noop", () => {
    fc.assert(
      fc.property(anyCase, (c) => {
        const change = planOne(c);
        if (change.action === "refused") {
          expectServerRefuses(c, change.errors);
          return;
        }
        if (change.action === "noop") {
          expect(change.diff).toEqual([]);
          return;
        }
        const again = planOne(afterApply(c, change.request!.body));
        expect(again.action).toBe("noop");
        expect(again.diff).toEqual([]);
        expect(again.request).toBeNull();
      }),
      { numRuns: 300 },
    );
  });

  it("is minimal: dropping any field of the body leaves a change", () => {
    fc.assert(
      fc.property(anyCase, (c) => {
        const change = planOne(c);
        if (change.action !== "update") return;
        const body = change.request!.body;
        const paths: string[][] = [];
        for (const [key, value] of Object.entries(body)) {
          if (key === "revision_source") continue; // passes through; not state
          if (key === "source_config" || key === "source_revision_config") {
            for (const leaf of Object.keys(value as JsonObject)) paths.push([key, leaf]);
          } else paths.push([key]);
        }
        for (const path of paths) {
          const again = planOne(afterApply(c, withoutField(body, path)));
          expect(again.action, `dropping ${path.join(".")}`).toBe("update");
          expect(again.diff.length, `dropping ${path.join(".")}`).toBeGreaterThan(0);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("keeps unmanaged resource_spec fields that are not server defaults when it sends the spec", () => {
    fc.assert(
      fc.property(containerCase, (c) => {
        const change = planOne(c);
        if (change.action !== "update") return;
        const before = fillResourceDefaults(c.live.source_config.resource_spec);
        const after = fillResourceDefaults(
          patchOnServer(c.live, change.request!.body).source_config.resource_spec,
        );
        const managed = (c.spec.source_config?.resource_spec ?? {}) as JsonObject;
        for (const [key, value] of Object.entries(before)) {
          if (key in managed || key.includes("limit") || key.startsWith("queue_")) continue;
          expect(after[key], key).toEqual(value);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("keeps the body inside the patch request shape and never sends an immutable field", () => {
    fc.assert(
      fc.property(anyCase, (c) => {
        const body = planOne(c).request?.body ?? {};
        for (const key of Object.keys(body)) {
          expect([
            "revision_source",
            "source_config",
            "source_revision_config",
            "secrets",
            "secret_references",
          ]).toContain(key);
        }
        const sc = (body.source_config ?? {}) as JsonObject;
        for (const key of ["integration_id", "repo_url", "deployment_type", "listener_id"])
          expect(sc).not.toHaveProperty(key);
      }),
    );
  });
});
