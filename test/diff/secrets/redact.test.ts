import { describe, expect, it } from "vitest";
import type { Plan, PlannedChange } from "../../../src/diff/plan/plan-types.js";
import { redactChange, redactPlan } from "../../../src/diff/secrets/redact.js";

// Secret values in a change's request body and diff, wherever they sit under /secrets.

const change = (body: Record<string, unknown>, diff: PlannedChange["diff"]): PlannedChange => ({
  kind: "Deployment",
  name: "svc",
  file: "d.yaml",
  line: 1,
  action: "update",
  id: "id",
  new_revision: true,
  revision_fields: [],
  in_place_fields: [],
  request: { method: "PATCH", path: "/v2/deployments/id", body },
  diff,
  errors: [],
  warnings: [],
  changed_secrets: [],
});

describe("redact", () => {
  it("replaces each secret value in the request body, keeping names and other fields", () => {
    const redacted = redactChange(
      change({ secrets: [{ name: "A", value: "s1" }, { name: "B" }, "odd"], source_config: { x: 1 } }, []),
    );
    expect(redacted.request?.body).toEqual({
      secrets: [{ name: "A", value: "<redacted>" }, { name: "B" }, "odd"],
      source_config: { x: 1 },
    });
  });

  it("leaves bodies without secrets, a null secrets list and requestless changes as they are", () => {
    const plain = change({ source_config: { x: 1 } }, []);
    expect(redactChange(plain).request).toBe(plain.request);
    expect(redactChange(change({ secrets: null }, [])).request?.body).toEqual({ secrets: null });
    const none = { ...plain, request: null };
    expect(redactChange(none).request).toBeNull();
  });

  it("redacts diff operations on the list, one item, or one item's value; others untouched", () => {
    const diff: PlannedChange["diff"] = [
      { op: "add", path: "/secrets", value: [{ name: "A", value: "s1" }] },
      { op: "add", path: "/secrets/1", value: { name: "B", value: "s2" } },
      { op: "replace", path: "/secrets/0/value", value: "s3" },
      { op: "remove", path: "/secrets/2" },
      { op: "replace", path: "/source_config/x", value: "visible" },
    ];
    expect(redactChange(change({}, diff)).diff).toEqual([
      { op: "add", path: "/secrets", value: [{ name: "A", value: "<redacted>" }] },
      { op: "add", path: "/secrets/1", value: { name: "B", value: "<redacted>" } },
      { op: "replace", path: "/secrets/0/value", value: "<redacted>" },
      { op: "remove", path: "/secrets/2" },
      { op: "replace", path: "/source_config/x", value: "visible" },
    ]);
  });

  it("a secret item added as a bare value is replaced whole", () => {
    const diff: PlannedChange["diff"] = [{ op: "add", path: "/secrets/0", value: "s4" }];
    expect(redactChange(change({}, diff)).diff).toEqual([
      { op: "add", path: "/secrets/0", value: "<redacted>" },
    ]);
  });

  it("a value deeper than an item is replaced whole, whatever its shape", () => {
    const diff: PlannedChange["diff"] = [
      { op: "add", path: "/secrets/0/value", value: { nested: "s5" } },
      { op: "replace", path: "/secrets/0/value/x", value: { name: "N", value: "s6" } },
    ];
    expect(redactChange(change({}, diff)).diff).toEqual([
      { op: "add", path: "/secrets/0/value", value: "<redacted>" },
      { op: "replace", path: "/secrets/0/value/x", value: "<redacted>" },
    ]);
  });

  it("redacts every change of a plan, keeping the rest of the plan", () => {
    const plan = {
      format_version: "1",
      summary: { create: 0, update: 1, noop: 0, refused: 0 },
      changes: [change({ secrets: [{ name: "A", value: "s1" }] }, [])],
    } as unknown as Plan;
    const redacted = redactPlan(plan);
    expect(JSON.stringify(redacted)).not.toContain("s1");
    expect(redacted.summary).toBe(plan.summary);
  });
});
