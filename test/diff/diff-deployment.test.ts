import { describe, expect, it } from "vitest";
import { diffDeployment, type DeploymentDiffInput } from "../../src/diff/diff-deployment.js";
import { UPLOAD_PLACEHOLDER } from "../../src/diff/plan/plan-types.js";
import { type Deployment, MASKED_SECRET_VALUE } from "../../src/schema/deployment.js";
import type { DeploymentSpec } from "../../src/schema/manifest.js";
import { liveDeployment } from "./helpers.js";

// diffDeployment field by field: what is compared, what is sent, what is only warned about.

const LISTENER = "22222222-2222-4222-8222-222222222222";
const OTHER_LISTENER = "33333333-3333-4333-8333-333333333333";

const container = (extra: Partial<DeploymentSpec> = {}): DeploymentSpec => ({
  source: "external_container",
  source_config: { listener_id: LISTENER, listener_config: { k8s_namespace: "agents" } },
  source_revision_config: { image_uri: "img:1" },
  ...extra,
});

const liveContainer = (extra: Partial<Deployment> = {}): Deployment =>
  liveDeployment({
    name: "web",
    source: "external_container",
    source_config: { listener_id: LISTENER, listener_config: { k8s_namespace: "agents" } },
    source_revision_config: { image_uri: "img:1" },
    ...extra,
  });

const diff = (spec: DeploymentSpec, live: Deployment, more: Partial<DeploymentDiffInput> = {}) =>
  diffDeployment({
    name: "web",
    spec,
    secrets: spec.secrets?.map((s) => ({ name: s.name, value: s.value ?? "" })),
    live,
    fingerprints: undefined,
    ...more,
  });

const masked = (name: string) => ({ name, value: MASKED_SECRET_VALUE });

describe("diffDeployment: secrets", () => {
  it("leaves live secrets alone when the manifest lists none", () => {
    const out = diff(container(), liveContainer({ secrets: [masked("K")] }));
    expect(out.fields).toEqual([]);
    expect(out.body).toEqual({});
    expect(out.live).not.toHaveProperty("secrets");
  });

  it("does not diff secrets whose values could not be resolved (no deletion suggested)", () => {
    const spec = container({ secrets: [{ name: "K", valueFrom: { env: "UNSET" } }] });
    const out = diff(spec, liveContainer({ secrets: [masked("K"), masked("OLD")] }), { secrets: undefined });
    expect(out.fields).toEqual([]);
    expect(out.body).toEqual({});
    expect(out.changedSecrets).toEqual([]);
  });

  it("a live deployment read without a secrets list: every desired secret is new", () => {
    const live = { ...liveContainer(), secrets: undefined } as unknown as Deployment;
    const out = diff(
      container({
        secrets: [
          { name: "B", value: "b" },
          { name: "A", value: "a" },
        ],
      }),
      live,
    );
    expect(out.fields).toEqual([
      { field: "secrets", class: "revision", old: [], new: ["A", "B"], sensitive: true },
    ]);
    expect(out.live.secrets).toEqual([]);
    expect(out.body).toEqual({
      secrets: [
        { name: "B", value: "b" },
        { name: "A", value: "a" },
      ],
    });
  });
});

describe("diffDeployment: revision_source", () => {
  it("is sent with a revision field, never with in-place changes alone", () => {
    const inPlace = diff(
      container({
        revision_source: "internal_container",
        source_config: {
          listener_id: LISTENER,
          listener_config: { k8s_namespace: "agents" },
          custom_url: "https://n",
        },
      }),
      liveContainer(),
    );
    expect(inPlace.body).toEqual({ source_config: { custom_url: "https://n" } });
    const revision = diff(
      container({ revision_source: "internal_container", source_revision_config: { image_uri: "img:2" } }),
      liveContainer(),
    );
    expect(revision.body).toEqual({
      source_revision_config: { image_uri: "img:2" },
      revision_source: "internal_container",
    });
  });
});

describe("diffDeployment: source_config", () => {
  it("a null key with nothing live is no warning, and is neither desired nor live", () => {
    const spec = container({
      source_config: {
        listener_id: LISTENER,
        listener_config: { k8s_namespace: "agents" },
        custom_url: null,
      },
    });
    const out = diff(spec, liveContainer());
    expect(out.warnings).toEqual([]);
    expect(out.fields).toEqual([]);
    expect(out.desired.source_config).not.toHaveProperty("custom_url");
  });

  it("a null key with a live value: a warning that PATCH cannot clear it", () => {
    const spec = container({
      source_config: {
        listener_id: LISTENER,
        listener_config: { k8s_namespace: "agents" },
        custom_url: null,
      },
    });
    const live = liveContainer({
      source_config: {
        listener_id: LISTENER,
        listener_config: { k8s_namespace: "agents" },
        custom_url: "https://x",
      },
    });
    const out = diff(spec, live);
    expect(out.warnings.map((w) => w.field)).toEqual(["source_config.custom_url"]);
    expect(out.body).toEqual({});
  });

  it("an immutable key that differs is a field of its own class, never in the body", () => {
    const spec = container({
      source_config: {
        listener_id: OTHER_LISTENER,
        listener_config: { k8s_namespace: "agents" },
        custom_url: "https://n",
      },
    });
    const out = diff(spec, liveContainer());
    expect(out.fields).toEqual([
      { field: "source_config.listener_id", class: "immutable", old: LISTENER, new: OTHER_LISTENER },
      { field: "source_config.custom_url", class: "in_place", old: null, new: "https://n" },
    ]);
    expect(out.body).toEqual({ source_config: { custom_url: "https://n" } });
  });
});

describe("diffDeployment: listener_config", () => {
  it("an empty listener_config manages nothing: no warning for the live namespace", () => {
    const spec = container({ source_config: { listener_id: LISTENER, listener_config: {} } });
    const out = diff(spec, liveContainer());
    expect(out.warnings).toEqual([]);
    expect(out.fields).toEqual([]);
  });

  it("a null namespace: a warning only when one is live", () => {
    const nullNamespace = container({
      source_config: { listener_id: LISTENER, listener_config: { k8s_namespace: null } },
    });
    expect(diff(nullNamespace, liveContainer()).warnings.map((w) => w.field)).toEqual([
      "source_config.listener_config.k8s_namespace",
    ]);
    const noneLive = liveContainer({ source_config: { listener_id: LISTENER, listener_config: {} } });
    expect(diff(nullNamespace, noneLive).warnings).toEqual([]);
  });
});

describe("diffDeployment: source_revision_config", () => {
  it("a null key: a warning when live has a value, nothing otherwise, and never sent", () => {
    const spec = container({ source_revision_config: { image_uri: "img:1", graph_config_path: null } });
    const withLive = diff(
      spec,
      liveContainer({ source_revision_config: { image_uri: "img:1", graph_config_path: "g.json" } }),
    );
    expect(withLive.warnings.map((w) => w.field)).toEqual(["source_revision_config.graph_config_path"]);
    expect(withLive.fields).toEqual([]);
    expect(withLive.body).toEqual({});
    expect(withLive.desired.source_revision_config).toStrictEqual({ image_uri: "img:1" });
    const without = diff(spec, liveContainer());
    expect(without.warnings).toEqual([]);
    expect(without.desired.source_revision_config).toStrictEqual({ image_uri: "img:1" });
  });

  it("a key absent live is absent from the normalised live state, not present as undefined", () => {
    const out = diff(
      container({ source_revision_config: { image_uri: "img:2" } }),
      liveContainer({ source_revision_config: {} }),
    );
    expect(out.live.source_revision_config).toStrictEqual({});
    expect(out.fields).toEqual([
      { field: "source_revision_config.image_uri", class: "revision", old: null, new: "img:2" },
    ]);
  });
});

describe("diffDeployment: secret_references", () => {
  const ref = { name: "TOKEN", secret_name: "tokens", secret_key: "token" };

  it("null asks to clear: a warning when some are live, none otherwise, never sent", () => {
    const spec = container({ secret_references: null });
    const out = diff(spec, liveContainer({ secret_references: [ref] }));
    expect(out.warnings.map((w) => w.field)).toEqual(["secret_references"]);
    expect(out.warnings[0]?.message).toContain('"secret_name":"tokens"');
    expect(out.body).toEqual({});
    expect(out.fields).toEqual([]);
    expect(diff(spec, liveContainer()).warnings).toEqual([]);
    expect(diff(spec, liveContainer({ secret_references: [] })).warnings).toEqual([]);
  });

  it("an empty list against none live is no change", () => {
    const out = diff(container({ secret_references: [] }), liveContainer());
    expect(out.fields).toEqual([]);
    expect(out.live.secret_references).toEqual([]);
  });
});

describe("diffDeployment: internal_source content", () => {
  it("a live deployment without source_revision_config: the upload is planned, not a crash", () => {
    const live = {
      ...liveDeployment({ name: "web", source: "internal_source" }),
      source_revision_config: undefined,
    } as unknown as Deployment;
    const out = diff({ source: "internal_source", source_path: "./app" }, live, {
      source: { desired: { source_path: "./app", digest: "sha256:b" }, recorded: undefined },
    });
    expect(out.upload?.reason).toBe("not_uploaded");
    expect(out.body).toEqual({ source_revision_config: { source_tarball_path: UPLOAD_PLACEHOLDER } });
  });
});

describe("diffDeployment: source_config ids", () => {
  const HEX = "abcdef01-2345-4678-9abc-def012345678";

  it("reads an upper-case spelling of the live id as the same id (the control plane stores it lower case)", () => {
    const spec = container({ source_config: { listener_id: HEX.toUpperCase() } });
    const out = diff(spec, liveContainer({ source_config: { listener_id: HEX } }));
    expect(out.fields).toEqual([]);
    expect((out.desired.source_config as { listener_id: string }).listener_id).toBe(HEX);
  });

  it("still refuses another id, whatever its case", () => {
    const spec = container({ source_config: { listener_id: OTHER_LISTENER.toUpperCase() } });
    const out = diff(spec, liveContainer({ source_config: { listener_id: LISTENER } }));
    expect(out.fields).toMatchObject([{ field: "source_config.listener_id", class: "immutable" }]);
  });
});
