import { describe, expect, it } from "vitest";
import { buildPlan } from "../../src/diff/plan/build-plan.js";
import { describeUpload, describeUploadContents, planUpload } from "../../src/diff/diff-source.js";
import { UPLOAD_PLACEHOLDER } from "../../src/diff/plan/plan-types.js";
import type { DeploymentSpec } from "../../src/schema/manifest.js";
import { desiredDeployment, liveDeployment } from "./helpers.js";

const A = `sha256:${"a".repeat(64)}`;
const B = `sha256:${"b".repeat(64)}`;
const desired = { source_path: "./app", digest: B };

describe("planUpload", () => {
  it("uploads when nothing is live, nothing is recorded, the live path is not ours, or the content changed", () => {
    expect(planUpload(desired, null, undefined)?.reason).toBe("not_uploaded");
    expect(planUpload(desired, "uploads/x.tar.gz", undefined)?.reason).toBe("unknown");
    expect(
      planUpload(desired, "uploads/x.tar.gz", { digest: B, object_path: "uploads/y.tar.gz" })?.reason,
    ).toBe("replaced");
    const changed = planUpload(desired, "uploads/x.tar.gz", { digest: A, object_path: "uploads/x.tar.gz" });
    expect(changed).toEqual({ source_path: "./app", digest: B, previous_digest: A, reason: "changed" });
    expect(describeUpload(changed!)).toBe(
      "source ./app (content changed sha256:aaaaaaaaaaaa… → sha256:bbbbbbbbbbbb…)",
    );
  });

  it("is null when the recorded upload is live and has the desired content", () => {
    expect(
      planUpload(desired, "uploads/x.tar.gz", { digest: B, object_path: "uploads/x.tar.gz" }),
    ).toBeNull();
  });
});

describe("buildPlan: internal_source", () => {
  const spec: DeploymentSpec = {
    source: "internal_source",
    source_path: "./app",
    source_revision_config: { graph_config_path: "langgraph.json" },
  };
  const live = () =>
    liveDeployment({
      name: "app",
      source: "internal_source",
      source_revision_config: {
        graph_config_path: "langgraph.json",
        source_tarball_path: "uploads/x.tar.gz",
      },
    });

  it("puts the upload and every other revision field in one PATCH", () => {
    const change = buildPlan({
      desired: [
        {
          ...desiredDeployment("app", { ...spec, source_revision_config: { graph_config_path: "g.json" } }),
          source: desired,
        },
      ],
      live: { deployments: [live()] },
      sources: () => ({ digest: A, object_path: "uploads/x.tar.gz" }),
    }).changes[0]!;
    expect(change.action).toBe("update");
    expect(change.request?.body).toEqual({
      source_revision_config: { graph_config_path: "g.json", source_tarball_path: UPLOAD_PLACEHOLDER },
    });
    expect(change.upload?.reason).toBe("changed");
  });

  it("is a noop when the recorded digest matches", () => {
    const plan = buildPlan({
      desired: [{ ...desiredDeployment("app", spec), source: desired }],
      live: { deployments: [live()] },
      sources: () => ({ digest: B, object_path: "uploads/x.tar.gz" }),
    });
    expect(plan.changes[0]!.action).toBe("noop");
    expect(plan.changes[0]!.upload).toBeUndefined();
    expect(plan.changes[0]!.diff).toEqual([]);
  });

  it("refuses when the caller did not read the source (never creates a deployment that cannot build)", () => {
    const change = buildPlan({ desired: [desiredDeployment("app", spec)], live: { deployments: [] } })
      .changes[0]!;
    expect(change.action).toBe("refused");
    expect(change.errors).toEqual([
      {
        field: "source_path",
        message: "the content of source_path was not read, so the upload cannot be planned",
      },
    ]);
  });

  it("plans no upload for a revision built from an image (revision_source)", () => {
    const image = { ...spec, revision_source: "internal_container" as const };
    const change = buildPlan({
      desired: [desiredDeployment("app", { ...image, source_revision_config: { image_uri: "r/app:2" } })],
      live: { deployments: [live()] },
    }).changes[0]!;
    expect(change.upload).toBeUndefined();
    expect(change.request?.body).toEqual({
      source_revision_config: { image_uri: "r/app:2" },
      revision_source: "internal_container",
    });
  });
});

describe("describeUploadContents", () => {
  const upload = (files: Array<{ path: string; size: number }>) =>
    planUpload({ ...desired, files, secret_files: ["/home/u/secret.txt"] }, null, undefined)!;

  it("gives count, total size and the largest files; the upload carries the listing, not the secret files", () => {
    const files = [
      { path: "a.ts", size: 10 },
      { path: "big.bin", size: 3 * 1024 * 1024 },
      { path: "b.ts", size: 2048 },
      { path: "c.ts", size: 10 },
    ];
    expect(upload(files)).toEqual({ ...desired, previous_digest: null, reason: "not_uploaded", files });
    expect(describeUploadContents(upload(files))).toBe(
      "upload holds 4 files, 3.0 MiB; largest: big.bin (3.0 MiB), b.ts (2.0 KiB), a.ts (10 B)",
    );
    expect(describeUploadContents(upload([files[0]!]))).toBe("upload holds 1 file, 10 B; files: a.ts (10 B)");
    expect(describeUploadContents(planUpload(desired, null, undefined)!)).toBeNull();
  });

  it("quotes a file name that could break a line or a Markdown block", () => {
    const text = describeUploadContents(upload([{ path: "x\n+ fake line```", size: 1 }]))!;
    expect(text).not.toContain("\n+");
    expect(text).not.toContain("`");
    expect(text).toContain('"x\\n+ fake line\\u0060\\u0060\\u0060" (1 B)');
  });
});
