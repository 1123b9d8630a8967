import { describe, expect, it } from "vitest";
import type { Plan, PlannedChange } from "../../src/diff/plan/plan-types.js";
import { refreshStatuses } from "../../src/reconcile/status-refresh.js";
import { emptyStatusStore, type StatusStore } from "../../src/status/status-types.js";
import { liveDeployment } from "../diff/helpers.js";

const change = (name: string, action: PlannedChange["action"]): PlannedChange => ({
  kind: "Deployment",
  name,
  file: `${name}.yaml`,
  line: 1,
  action,
  id: null,
  new_revision: false,
  revision_fields: [],
  in_place_fields: [],
  request: null,
  diff: [],
  errors: [],
  warnings: [],
  changed_secrets: [],
});

const planOf = (...changes: PlannedChange[]): Plan =>
  ({ summary: { create: 0, update: 0, noop: 0, refused: 0 }, changes }) as unknown as Plan;

const storeOf = (records: ReturnType<typeof refreshStatuses>["records"]): StatusStore => {
  const store = emptyStatusStore();
  for (const r of records) store.objects.set(`${r.kind}/${r.name}`, r);
  return store;
};

describe("refreshStatuses", () => {
  const live = [
    liveDeployment({ name: "a", source: "gitrepo" }),
    liveDeployment({ name: "gone", source: "gitrepo" }),
  ];
  const first = refreshStatuses({
    plan: planOf(change("a", "noop")),
    store: storeOf([{ ...blankish("gone"), id: live[1]!.id }]),
    live,
    latestStatuses: new Map(),
    now: Date.parse("2026-01-01T00:00:00Z"),
  });

  it("keeps the time of a record that did not change, so nothing needs writing", () => {
    const again = refreshStatuses({
      plan: planOf(change("a", "noop")),
      store: storeOf(first.records),
      live,
      latestStatuses: new Map(),
      now: Date.parse("2026-01-02T00:00:00Z"),
    });
    expect(again.records).toEqual(first.records);
    expect(again.records.map((r) => r.updated_at)).toEqual([
      "2026-01-01T00:00:00.000Z",
      "2026-01-01T00:00:00.000Z",
    ]);
  });

  it("stamps the time of a record that changed", () => {
    const changed = refreshStatuses({
      plan: planOf(change("a", "update")),
      store: storeOf(first.records),
      live,
      latestStatuses: new Map(),
      now: Date.parse("2026-01-02T00:00:00Z"),
    });
    const a = changed.records.find((r) => r.name === "a")!;
    expect(a).toMatchObject({ sync: "OutOfSync", updated_at: "2026-01-02T00:00:00.000Z" });
    expect(changed.records.find((r) => r.name === "gone")!.updated_at).toBe("2026-01-01T00:00:00.000Z");
  });
});

function blankish(name: string) {
  return {
    kind: "Deployment" as const,
    name,
    id: null,
    latest_revision_id: null,
    active_revision_id: null,
    revision_status: null,
    sync: "Synced" as const,
    health: "Healthy" as const,
    git_commit: null,
    manifest_digest: null,
    secret_fingerprints: null,
    updated_at: "2025-06-01T00:00:00.000Z",
    last_error: null,
  };
}
