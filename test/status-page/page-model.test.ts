import { describe, expect, it } from "vitest";
import { publicUrl } from "../../src/api/public-url.js";
import {
  type Activity,
  buildObjectPage,
  type PageObject,
  parseObjectQuery,
} from "../../src/status-page/page-model.js";
import { status } from "../controller/fixtures.js";

const activity = (result: string, drift: string[] = []): Activity => ({
  at: "2026-11-24T10:00:00.000Z",
  reason: drift.length ? "drift" : "change",
  result,
  action: "update",
  duration_ms: 42,
  drift_fields: drift,
  plan: [{ mark: "~", text: 'description: null → "x"' }],
});

const object = (name: string, extra: Partial<PageObject> = {}): PageObject => ({
  kind: "Deployment",
  name,
  status: status(name),
  manifest: { file: `${name}.yaml`, line: 2 },
  activity: undefined,
  ...extra,
});

const objects = [
  object("charlie", { status: status("charlie", { sync: "OutOfSync", health: "Healthy" }) }),
  object("alpha"),
  object("bravo", {
    status: status("bravo", { sync: "Failed", health: "Degraded", last_error: "image pull failed" }),
  }),
  // In git, never reconciled yet.
  object("delta", { status: undefined }),
  // Recorded, no longer in git.
  object("echo", { manifest: undefined, activity: activity("drift-reported", ["description"]) }),
];

describe("status page rows", () => {
  it("sorts by name and counts every object by sync and health before filtering", () => {
    const page = buildObjectPage(objects, { sync: "Synced" });
    expect(page.rows.map((r) => r.name)).toEqual(["alpha", "echo"]);
    expect(page.total).toBe(5);
    expect(page.matched).toBe(2);
    expect(page.counts.sync).toMatchObject({ Synced: 2, OutOfSync: 1, Failed: 1, Unknown: 1 });
    expect(page.counts.health).toMatchObject({ Healthy: 3, Degraded: 1, Unknown: 1 });
  });

  it("shows an object git has and live was never checked for as Unknown, and one git dropped with no file", () => {
    const rows = buildObjectPage(objects, {}).rows;
    expect(rows.find((r) => r.name === "delta")).toMatchObject({
      sync: "Unknown",
      health: "Unknown",
      id: null,
    });
    expect(rows.find((r) => r.name === "echo")).toMatchObject({
      file: null,
      line: null,
      drift_fields: ["description"],
      last_reconcile: { result: "drift-reported", duration_ms: 42 },
    });
  });

  it("searches name, id, file and error, case-insensitively, combined with the filters", () => {
    expect(buildObjectPage(objects, { q: "IMAGE PULL" }).rows.map((r) => r.name)).toEqual(["bravo"]);
    expect(buildObjectPage(objects, { q: "id-charlie" }).rows.map((r) => r.name)).toEqual(["charlie"]);
    expect(buildObjectPage(objects, { q: "alpha.yaml" }).rows.map((r) => r.name)).toEqual(["alpha"]);
    expect(buildObjectPage(objects, { q: "a", health: "Degraded" }).rows.map((r) => r.name)).toEqual([
      "bravo",
    ]);
  });

  it("pages with a bounded size, and clamps offsets and sizes it cannot serve", () => {
    const many = Array.from({ length: 450 }, (_, i) => object(`obj-${String(i).padStart(3, "0")}`));
    const second = buildObjectPage(many, { offset: 50, limit: 50 });
    expect(second.rows[0]?.name).toBe("obj-050");
    expect(second.rows).toHaveLength(50);
    expect(buildObjectPage(many, { limit: 100_000 }).rows).toHaveLength(200);
    expect(buildObjectPage(many, { limit: -5 }).rows).toHaveLength(1);
    expect(buildObjectPage(many, { offset: 9_999 }).offset).toBe(449);
    expect(buildObjectPage(many, { offset: Number.NaN }).offset).toBe(0);
  });

  it("never carries secret fingerprints, a pending intent or a plan in a row", () => {
    const secretive = object("secretive", {
      status: status("secretive", {
        secret_fingerprints: { salt: "salt-abc", values: { TOKEN: "fp-def" }, set: "fp-set" },
        pending: {
          secret_fingerprints: null,
          manifest_digest: "digest-123",
          git_commit: null,
          base_revision_id: null,
          base_updated_at: null,
          started_at: "2026-11-24T10:00:00.000Z",
        },
      }),
      activity: activity("applied"),
    });
    const text = JSON.stringify(buildObjectPage([secretive], {}));
    for (const leak of ["salt-abc", "fp-def", "fp-set", "digest-123", "description: null"])
      expect(text).not.toContain(leak);
  });

  it("reads the query from URL parameters, ignoring what is malformed", () => {
    expect(parseObjectQuery(new URLSearchParams("sync=Synced&q=abc&offset=50&limit=20"))).toEqual({
      sync: "Synced",
      q: "abc",
      offset: 50,
      limit: 20,
    });
    expect(parseObjectQuery(new URLSearchParams("sync=&offset=x"))).toEqual({ offset: Number.NaN });
    expect(parseObjectQuery(new URLSearchParams(`q=${"x".repeat(5000)}`)).q).toHaveLength(200);
  });
});

describe("status page header", () => {
  it("shows the control plane URL without credentials, query or fragment", () => {
    expect(publicUrl("https://user:s3cret@cp.example.com/base/?key=abc#x")).toBe(
      "https://cp.example.com/base",
    );
    expect(publicUrl("http://127.0.0.1:8080")).toBe("http://127.0.0.1:8080");
    expect(publicUrl("not a url")).toBe("(not a URL)");
  });
});
