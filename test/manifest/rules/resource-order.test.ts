import { describe, expect, it } from "vitest";
import { brief, check } from "../helpers.js";

// resource_spec values the control plane takes but no cluster can deploy: a negative count or
// quantity is a schema error (the control plane answers 422), a request above its limit or a
// minimum of replicas above its maximum a warning (the revision would end DEPLOY_FAILED; the API
// takes it, so import of such a deployment still writes it). docs/control-plane.md "Validation and
// errors" says what the local control plane does with each.

const withSpec = (lines: string) => `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: sized
spec:
  source: external_container
  source_config:
    listener_id: 10000000-0000-4000-8000-000000000001
    resource_spec:
${lines
  .trim()
  .split("\n")
  .map((l) => `      ${l.trim()}`)
  .join("\n")}
  source_revision_config:
    image_uri: registry.example/sized:1
`;

const messages = (lines: string) => check(withSpec(lines)).problems.map((p) => p.message);

describe("resource_spec bounds", () => {
  it("refuses a negative count or quantity, at the field", () => {
    for (const field of ["min_scale", "memory_mb", "db_storage_gi", "executor_memory_mb"]) {
      const { problems } = check(withSpec(`${field}: -1`));
      expect(brief(problems), field).toEqual([`10:${field.length + 9} error out-of-range`]);
      expect(problems[0]!.message).toBe(`spec.source_config.resource_spec.${field} -1 must be at least 0`);
    }
  });

  it("refuses a negative database CPU, which has no range of its own, as a CPU", () => {
    expect(messages("db_cpu: -0.5")).toEqual([
      "spec.source_config.resource_spec.db_cpu -0.5 must be at least 0 cores",
    ]);
  });

  it("takes zero and the values a cluster deploys", () => {
    expect(check(withSpec("min_scale: 0\nmax_scale: 0\nmemory_mb: 0")).problems).toEqual([]);
    expect(check(withSpec("min_scale: 2\nmax_scale: 2\ncpu: 1\ncpu_limit: 1")).problems).toEqual([]);
    // Defaults filled as the control plane fills them: cpu_limit is 2 x cpu.
    expect(check(withSpec("cpu: 4\nmemory_mb: 512")).problems).toEqual([]);
  });

  it("warns of a minimum of replicas above its maximum, at the lower field", () => {
    const { problems } = check(withSpec("min_scale: 5\nmax_scale: 2"));
    expect(brief(problems)).toEqual(["10:18 warning resource-order"]);
    expect(problems[0]!.message).toBe(
      "min_scale 5 is above max_scale 2: Kubernetes refuses a minimum of replicas above its maximum, so the revision would fail to deploy",
    );
  });

  it("warns of a request above its limit, the request rounded as the control plane stores it", () => {
    expect(messages("cpu: 1.04\ncpu_limit: 1")).toEqual([
      "cpu 1.04 has more than one decimal; the control plane rounds it to 1",
    ]);
    expect(messages("cpu: 1.05\ncpu_limit: 1")).toContain(
      "cpu 1.1 is above cpu_limit 1: Kubernetes refuses a request above its limit, so the revision would fail to deploy",
    );
    expect(messages("memory_mb: 1024\nmemory_limit_mb: 512")).toHaveLength(1);
    expect(messages("redis_memory_mb: 300\nredis_memory_limit_mb: 200")).toHaveLength(1);
  });

  it("names a default the control plane fills, at the field the manifest writes", () => {
    const { problems } = check(withSpec("cpu: 2\nqueue_cpu_limit: 1.5"));
    expect(brief(problems)).toEqual(["11:24 warning resource-order"]);
    expect(problems[0]!.message).toContain(
      "queue_cpu 2 (its default, from cpu) is above queue_cpu_limit 1.5",
    );
  });

  it("fills a field written as null, as the control plane fills an absent one", () => {
    expect(messages("cpu: 2\nqueue_cpu: null\nqueue_cpu_limit: 1.5")[0]).toContain(
      "queue_cpu 2 (its default, from cpu) is above queue_cpu_limit 1.5",
    );
  });

  it("says a pair once when both sides are defaults of another pair", () => {
    // queue_min_scale and queue_max_scale default to min_scale and max_scale.
    expect(messages("min_scale: 3\nmax_scale: 1")).toHaveLength(1);
  });
});
