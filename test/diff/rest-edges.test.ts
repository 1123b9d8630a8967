import { describe, expect, it } from "vitest";
import { buildCreateBody, normaliseCreate } from "../../src/diff/create-body.js";
import { sortOperations } from "../../src/diff/diff-order.js";
import { describeUploadContents } from "../../src/diff/diff-source.js";
import { diffResourceSpec } from "../../src/diff/diff-resource-spec.js";
import { show } from "../../src/diff/fields.js";
import { diffOrganizationAccess } from "../../src/diff/organization-access.js";
import type { PlannedUpload } from "../../src/diff/plan/plan-types.js";
import { isDerivedDefault, roundResourceSpec } from "../../src/diff/resource-spec.js";
import { tagBuildOnPushError } from "../../src/diff/tag-ref.js";
import type { Deployment } from "../../src/schema/deployment.js";
import { liveDeployment } from "./helpers.js";

// The smaller rules of src/diff, each at its edges: who can join an organization, the tag rule's
// three messages, resource_spec sub-fields set to null, the create body, the upload's listing.

describe("OrganizationAccess: who can join after the change", () => {
  const org = (jit: boolean, invites: boolean) => ({
    id: "o",
    display_name: "acme",
    sso_login_slug: "acme",
    jit_provisioning_enabled: jit,
    invites_enabled: invites,
  });

  it("says it for each of the four settings", () => {
    const effect = (jit: boolean, invites: boolean) =>
      diffOrganizationAccess({ jit_provisioning_enabled: jit, invites_enabled: invites }, org(!jit, !invites))
        .effect;
    expect(effect(true, true)).toBe(
      "SSO users join automatically with the default role and workspaces; a pending invite takes precedence",
    );
    expect(effect(true, false)).toBe(
      "SSO users join automatically with the default role and workspaces; invitations cannot be sent",
    );
    expect(effect(false, true)).toBe(
      "only SSO users with a pending invite can join (or users added through SCIM or by an administrator)",
    );
    expect(effect(false, false)).toBe(
      "closed: SSO users join only through SCIM or an administrator; invitations cannot be sent",
    );
  });

  it("a setting the manifest leaves out keeps its live value in the effect, unmanaged", () => {
    const out = diffOrganizationAccess({ invites_enabled: true }, org(true, false));
    expect(out.effect).toBe(
      "SSO users join automatically with the default role and workspaces; a pending invite takes precedence",
    );
    expect(out.body).toEqual({ invites_enabled: true });
    expect(out.live).toEqual({ invites_enabled: false });
  });
});

describe("tag repo_ref with build_on_push: which message", () => {
  const live = (ref: string, buildOnPush: boolean): Deployment =>
    liveDeployment({
      name: "api",
      source: "gitrepo",
      source_config: { build_on_push: buildOnPush },
      source_revision_config: { repo_ref: ref },
    });
  const locate = (path: readonly string[]) => ({ file: "api.yaml", line: path.length, column: 1 });

  it("a branch is never refused, build_on_push or not", () => {
    expect(
      tagBuildOnPushError({ source_config: { build_on_push: true } }, live("main", false), locate),
    ).toBeNull();
    expect(
      tagBuildOnPushError({ source_revision_config: { repo_ref: "dev" } }, live("main", true), locate),
    ).toBeNull();
  });

  it("build_on_push true with no repo_ref anywhere is not refused", () => {
    const noRef = liveDeployment({
      name: "api",
      source: "gitrepo",
      source_config: {},
      source_revision_config: {},
    });
    expect(tagBuildOnPushError({ source_config: { build_on_push: true } }, noRef, locate)).toBeNull();
  });

  it("both live already: every change is refused, and the message says so", () => {
    const error = tagBuildOnPushError(
      { source_config: { custom_url: "x" } },
      live("refs/tags/v1", true),
      locate,
    );
    expect(error).toEqual({
      field: "source_config.build_on_push",
      message:
        'build_on_push is true with the tag repo_ref "refs/tags/v1" live, so the control plane refuses every change to this deployment (at api.yaml:3): set source_config.build_on_push: false in the manifest',
    });
  });

  it("both sent at once is not blamed on one of the two", () => {
    const body = {
      source_config: { build_on_push: true },
      source_revision_config: { repo_ref: "refs/tags/v2" },
    };
    expect(tagBuildOnPushError(body, live("main", false), locate)?.message).toContain("refuses every change");
  });
});

describe("diffResourceSpec: sub-fields", () => {
  it("a sub-field set to null with a live value is a change to null, and is not sent", () => {
    const out = diffResourceSpec({ cpu: 1, memory_mb: null }, { cpu: 1, memory_mb: 2048, max_scale: 3 });
    expect(out.fields).toEqual([
      { field: "source_config.resource_spec.memory_mb", class: "revision", old: 2048, new: null },
    ]);
    expect(out.live).toStrictEqual({ cpu: 1, memory_mb: 2048 });
    // memory_limit_mb (2048 × 2 = its default) follows memory_mb on the server: not carried over.
    expect(out.body).toStrictEqual({ cpu: 1, max_scale: 3 });
  });

  it("a sub-field set to null with nothing live (or only a derived default) changes nothing", () => {
    expect(diffResourceSpec({ cpu: 1, memory_mb: null }, { cpu: 1 }).fields).toEqual([]);
    expect(diffResourceSpec({ cpu: 1, cpu_limit: null }, { cpu: 1, cpu_limit: 2 }).fields).toEqual([]);
  });

  it("a managed key absent live is absent from the normalised live state", () => {
    const out = diffResourceSpec({ max_scale: 4 }, { cpu: 1 });
    expect(out.live).toStrictEqual({});
    expect(out.fields.map((f) => f.field)).toEqual(["source_config.resource_spec.max_scale"]);
  });

  it("unmanaged live sub-fields are carried over as stored, not rounded again", () => {
    const out = diffResourceSpec({ max_scale: 4 }, { cpu: 0.45, max_scale: 2 });
    expect(out.body).toStrictEqual({ max_scale: 4, cpu: 0.45 });
  });
});

describe("resource_spec rounding and defaults", () => {
  it("rounds only CPU fields that are numbers", () => {
    expect(roundResourceSpec({ memory_mb: 512.25, cpu: 0.25, db_cpu: "0.25" })).toEqual({
      memory_mb: 512.25,
      cpu: 0.3,
      db_cpu: "0.25",
    });
  });

  it("a default derives only from a number", () => {
    expect(isDerivedDefault({ cpu: "2", cpu_limit: 4 }, "cpu_limit")).toBe(false);
    expect(isDerivedDefault({ cpu: 2, cpu_limit: 4 }, "cpu_limit")).toBe(true);
  });
});

describe("the create body", () => {
  it("gitrepo: custom_url is the server's, never sent; other sources send it", () => {
    const sourceConfig = { custom_url: "https://x", build_on_push: false };
    expect(
      buildCreateBody("a", { source: "gitrepo", source_config: sourceConfig }, undefined).source_config,
    ).toEqual({
      build_on_push: false,
    });
    expect(
      buildCreateBody("a", { source: "internal_container", source_config: sourceConfig }, undefined)
        .source_config,
    ).toEqual(sourceConfig);
  });

  it("its normalised state lists secret_references by name", () => {
    const refs = [
      { name: "B", secret_name: "s", secret_key: "b" },
      { name: "A", secret_name: "s", secret_key: "a" },
    ];
    const body = buildCreateBody("a", { source: "external_container", secret_references: refs }, undefined);
    expect(body.secret_references).toEqual(refs);
    expect((normaliseCreate(body).secret_references as { name: string }[]).map((r) => r.name)).toEqual([
      "A",
      "B",
    ]);
  });
});

describe("the upload's listing", () => {
  const upload = (files: { path: string; size: number }[]): PlannedUpload => ({
    source_path: "./app",
    digest: "sha256:b",
    previous_digest: null,
    reason: "not_uploaded",
    files,
  });

  it("sizes at the unit boundaries", () => {
    expect(describeUploadContents(upload([{ path: "a", size: 1023 }]))).toBe(
      "upload holds 1 file, 1023 B; files: a (1023 B)",
    );
    expect(describeUploadContents(upload([{ path: "a", size: 1024 }]))).toBe(
      "upload holds 1 file, 1.0 KiB; files: a (1.0 KiB)",
    );
    expect(describeUploadContents(upload([{ path: "a", size: 1024 * 1024 }]))).toBe(
      "upload holds 1 file, 1.0 MiB; files: a (1.0 MiB)",
    );
  });

  it("three files are all listed as files; equal sizes in path order", () => {
    const files = [
      { path: "c.ts", size: 10 },
      { path: "a.ts", size: 10 },
      { path: "b.ts", size: 10 },
    ];
    expect(describeUploadContents(upload(files))).toBe(
      "upload holds 3 files, 30 B; files: a.ts (10 B), b.ts (10 B), c.ts (10 B)",
    );
  });

  it("a name with anything but plain characters is quoted, wherever they are", () => {
    expect(describeUploadContents(upload([{ path: "my file.ts", size: 1 }]))).toBe(
      'upload holds 1 file, 1 B; files: "my file.ts" (1 B)',
    );
    expect(describeUploadContents(upload([{ path: "a\nb", size: 1 }]))).toContain('"a\\nb"');
  });
});

describe("show", () => {
  it("writes a value as JSON, and an absent one as null", () => {
    expect(show(undefined)).toBe("null");
    expect(show("x")).toBe('"x"');
    expect(show(null)).toBe("null");
  });
});

describe("the diff's order", () => {
  it("compares paths segment by segment, not character by character", () => {
    const ops = [
      { op: "add" as const, path: "/a-c", value: 1 },
      { op: "add" as const, path: "/a/b", value: 2 },
    ];
    expect(sortOperations(ops).map((o) => o.path)).toEqual(["/a/b", "/a-c"]);
  });
});
