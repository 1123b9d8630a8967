import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_LISTENER_ID } from "../../src/control-plane/options.js";
import { type Api, container, start } from "./helpers.js";

// Spec 2.2 "SourceConfig": listener_config is "validated by the compute type of the listener";
// ListenerConfig's k8s_namespace "applies only to listeners of compute type k8s". Both sides:
// a k8s listener takes a namespace, a listener of another compute type refuses it (400, decisions.md
// "Patch semantics": a rule that depends on the installation), and takes the deployment without one.

const OTHER = "10000000-0000-4000-8000-0000000000e5";
let api: Api;
beforeAll(async () => {
  api = await start({
    mode: "self-hosted",
    listeners: [
      { id: DEFAULT_LISTENER_ID, compute_type: "k8s", compute_id: "cluster" },
      { id: OTHER, compute_type: "ecs", compute_id: "fargate" },
    ],
  });
});
afterAll(async () => api.cp.stop());

const on = (name: string, listenerId: string, namespace?: string | null) =>
  container(name, {
    source_config: {
      listener_id: listenerId,
      ...(namespace === undefined ? {} : { listener_config: { k8s_namespace: namespace } }),
    },
  });

describe("listener_config by the listener's compute type", () => {
  it.each([
    ["k8s listener with a namespace", 201, on("k8s-ns", DEFAULT_LISTENER_ID, "agents")],
    ["k8s listener without one", 201, on("k8s-none", DEFAULT_LISTENER_ID)],
    ["ecs listener without a namespace", 201, on("ecs-none", OTHER)],
    ["ecs listener with a null namespace", 201, on("ecs-null", OTHER, null)],
    ["ecs listener with a namespace", 400, on("ecs-ns", OTHER, "agents")],
  ])("create: %s → %i", async (_name, status, body) => {
    const answer = await api.call("POST", "/v2/deployments", body);
    expect(answer.status).toBe(status);
    if (status === 400)
      expect(answer.body.detail).toBe(
        `source_config.listener_config.k8s_namespace applies only to listeners of compute type k8s; listener ${OTHER} has compute type ecs`,
      );
  });

  it("PATCH: a namespace for an ecs listener's deployment is refused with the same reason, nothing changed", async () => {
    const created = await api.call("POST", "/v2/deployments", on("ecs-patch", OTHER));
    const answer = await api.call("PATCH", `/v2/deployments/${created.body.id}`, {
      source_config: { listener_config: { k8s_namespace: "agents" } },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.detail).toContain("applies only to listeners of compute type k8s");
    const after = await api.call("GET", `/v2/deployments/${created.body.id}`);
    expect(after.body.source_config.listener_config).toBeNull();
    expect(after.body.updated_at).toBe(created.body.updated_at);
  });

  it("lists both listeners with their compute types", async () => {
    const listed = await api.call("GET", "/v2/listeners");
    expect(listed.body.resources.map((l: { compute_type: string }) => l.compute_type)).toEqual([
      "k8s",
      "ecs",
    ]);
  });
});
