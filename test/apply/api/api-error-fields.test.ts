import { describe, expect, it } from "vitest";
import { ApiError } from "../../../src/api/errors.js";
import { parseDetail } from "../../../src/api/transport/error-detail.js";
import type { LoadedManifest } from "../../../src/manifest/types.js";
import { describeSendError, manifestPathOf } from "../../../src/apply/api/api-error-fields.js";

const loaded = (manifest: unknown): LoadedManifest => ({
  manifest: manifest as LoadedManifest["manifest"],
  file: "apps/a.yaml",
  location: { file: "apps/a.yaml", line: 1, column: 1 },
  // Points at the depth of the path, so the test sees which path was located.
  locate: (path) => ({ file: "apps/a.yaml", line: path.length, column: 3 }),
});

const deployment = loaded({
  apiVersion: "plumb/v1",
  kind: "Deployment",
  metadata: { name: "a" },
  spec: {
    source: "internal_source",
    source_path: "./src",
    secrets: [
      { name: "B", value: "b" },
      { name: "A", valueFrom: { env: "A_VALUE" } },
    ],
  },
});

describe("manifestPathOf", () => {
  it("maps API body paths to manifest paths", () => {
    expect(manifestPathOf(["name"], deployment)).toEqual(["metadata", "name"]);
    expect(manifestPathOf(["source_config", "build_on_push"], deployment)).toEqual([
      "spec",
      "source_config",
      "build_on_push",
    ]);
    expect(manifestPathOf(["source_revision_config", "source_tarball_path"], deployment)).toEqual([
      "spec",
      "source_path",
    ]);
    expect(manifestPathOf([], deployment)).toEqual([]);
  });

  it("finds secrets by name, and points a value read from valueFrom at valueFrom", () => {
    const body = { secrets: [{ name: "A" }, { name: "B" }] };
    expect(manifestPathOf(["secrets", 0, "value"], deployment, body)).toEqual([
      "spec",
      "secrets",
      1,
      "valueFrom",
    ]);
    expect(manifestPathOf(["secrets", 1, "value"], deployment, body)).toEqual([
      "spec",
      "secrets",
      0,
      "value",
    ]);
    expect(manifestPathOf(["secrets", 1], deployment, body)).toEqual(["spec", "secrets", 0]);
    expect(manifestPathOf(["secrets", 5, "name"], deployment, body)).toEqual(["spec", "secrets"]);
  });

  it("OrganizationAccess settings live under spec", () => {
    const org = loaded({
      apiVersion: "plumb/v1",
      kind: "OrganizationAccess",
      metadata: { name: "o" },
      spec: {},
    });
    expect(manifestPathOf(["invites_enabled"], org)).toEqual(["spec", "invites_enabled"]);
  });
});

describe("describeSendError", () => {
  const error = new ApiError({
    code: "validation",
    status: 422,
    method: "PATCH",
    path: "/v2/deployments/d1",
    detail: [{ loc: ["body", "secrets", 0, "name"], msg: "bad name", type: "string_pattern_mismatch" }],
  });

  it("names file:line:col and the manifest field of each rejected field", () => {
    expect(describeSendError(error, { loaded: deployment, body: { secrets: [{ name: "A" }] } })).toBe(
      "PATCH /v2/deployments/d1 rejected by the control plane (422): apps/a.yaml:4:3: spec.secrets[1].name: bad name",
    );
  });

  it("ends with the note of issues the client left out, not as a problem at line 1 of the manifest", () => {
    // 150 issues: the client keeps 100 and closes the list with its note (loc [], plumb.truncated).
    const issues = Array.from({ length: 150 }, (_, i) => ({
      loc: ["body", "source_config", "resource_spec", "cpu"],
      msg: `bad ${i}`,
      type: "value_error",
    }));
    const detail = parseDetail(JSON.stringify({ detail: issues }), (t) => t);
    const long = new ApiError({ code: "validation", status: 422, method: "PATCH", path: "/v2/d/1", detail });
    const text = describeSendError(long, { loaded: deployment });
    // It was `apps/a.yaml:0:3: the document: … 69 more issues left out, …` (locate([]): line 0 here).
    expect(text).not.toContain("the document");
    expect(text).toMatch(
      /^PATCH \/v2\/d\/1 rejected by the control plane \(422\): apps\/a\.yaml:4:3: spec\.source_config\.resource_spec\.cpu: bad 0; .* \(… \d+ more issues left out, and \d+ characters of those kept \(at most 4000 characters of a 422's issues are kept\)\)$/,
    );
  });

  it("keeps other errors, and 422s without a manifest, as they are", () => {
    expect(describeSendError(error, {})).toBe(error.message);
    expect(describeSendError(new Error("boom"), { loaded: deployment })).toBe("boom");
  });
});
