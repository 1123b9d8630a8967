import { describe, expect, it } from "vitest";
import type { FieldChange, PlannedChange } from "../../src/diff/plan/plan-types.js";
import { SOURCE_TARBALL_FIELD } from "../../src/diff/plan/plan-types.js";
import type { DriftReport } from "../../src/reconcile/drift.js";
import { planDriftEdits, writeDriftEdits } from "../../src/reconcile/drift-write.js";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

// drift --write writes only what plumb can: a scalar the manifest manages, in-place or revision.
// Secrets, immutable fields, the uploaded source and non-scalar values stay reported, with why.

const change = (fields: FieldChange[]) => ({ fields }) as unknown as PlannedChange;
const report = (kind: "Deployment" | "OrganizationAccess", fields: FieldChange[]): DriftReport => ({
  format_version: "1",
  in_sync: false,
  drifted: true,
  summary: { in_sync: 0, pending: 0, differs: 1, refused: 0, missing: 0, vanished: 0, "removed-from-git": 0 },
  items: [
    {
      kind,
      name: "a",
      id: "x",
      reason: "differs",
      origin: "drift",
      fields: [],
      field_origins: {},
      file: "a.yaml",
      line: 1,
      change: change(fields),
    },
  ],
  not_checked: [],
});

describe("planDriftEdits", () => {
  it("writes scalars, keeps secrets, immutable fields, the uploaded source and non-scalars", () => {
    const { edits, kept } = planDriftEdits(
      report(
        "Deployment",
        (
          [
            { field: "source_revision_config.image_uri", class: "revision", old: "img:live", new: "img:git" },
            { field: "source_config.build_on_push", class: "in_place", old: false, new: true },
            { field: "secrets", class: "revision", old: ["A"], new: ["A"], sensitive: true },
            {
              field: "source_config.repo_url",
              class: "immutable",
              old: "https://x/live",
              new: "https://x/git",
            },
            { field: SOURCE_TARBALL_FIELD, class: "revision", old: "d1", new: "d2" },
            {
              field: "source_config.resource_spec.volumes",
              class: "revision",
              old: [],
              new: [{ name: "v" }],
            },
            { field: "source_config.custom_url", class: "in_place", old: null, new: "https://a" },
          ] satisfies FieldChange[]
        ).map((f): FieldChange => ({ ...f, origin: "drift" })),
      ),
    );
    expect(edits.get("a.yaml")?.map((e) => [e.path.join("."), e.value])).toEqual([
      ["spec.source_revision_config.image_uri", "img:live"],
      ["spec.source_config.build_on_push", false],
    ]);
    expect(kept.map((k) => k.field)).toEqual([
      "secrets",
      "source_config.repo_url",
      SOURCE_TARBALL_FIELD,
      "source_config.resource_spec.volumes",
      "source_config.custom_url",
    ]);
  });

  it("writes only drift: a change in git not applied yet, a conflict, or an unknown origin stay as they are", () => {
    const { edits, kept } = planDriftEdits(
      report("Deployment", [
        {
          field: "source_revision_config.image_uri",
          class: "revision",
          old: "v1",
          new: "v2",
          origin: "change",
        },
        {
          field: "source_config.build_on_push",
          class: "in_place",
          old: false,
          new: true,
          origin: "conflict",
        },
        { field: "source_config.custom_url", class: "in_place", old: "https://l", new: "https://g" },
        { field: "source_revision_config.tag", class: "revision", old: "live", new: "git", origin: "drift" },
      ]),
    );
    expect(edits.get("a.yaml")?.map((e) => [e.path.join("."), e.value])).toEqual([
      ["spec.source_revision_config.tag", "live"],
    ]);
    expect(kept.map((k) => [k.field, k.reason.split(" ")[0]])).toEqual([
      ["source_revision_config.image_uri", "a"],
      ["source_config.build_on_push", "a"],
      ["source_config.custom_url", "not"],
    ]);
    expect(kept[0]?.reason).toContain("not applied yet");
    expect(kept[1]?.reason).toContain("conflict");
  });

  it("an OrganizationAccess setting is written under spec", () => {
    const { edits } = planDriftEdits(
      report("OrganizationAccess", [
        { field: "invites_enabled", class: "in_place", old: false, new: true, origin: "drift" },
      ]),
    );
    expect(edits.get("a.yaml")?.map((e) => [e.path, e.value])).toEqual([
      [["spec", "invites_enabled"], false],
    ]);
  });
});

describe("writeDriftEdits with environments", () => {
  it("restores every file and writes nothing when another environment's render changed", async () => {
    const dir = await mkdtemp(join(tmpdir(), "plumb-drift-unsafe-"));
    try {
      const text = `apiVersion: plumb/v1
kind: Deployment
metadata: {name: a}
spec:
  source: internal_container
  source_revision_config: {image_uri: "img:git"}
`;
      await writeFile(join(dir, "a.yaml"), text);
      let renders = 0;
      // The guard's input: another environment's render, here different after the write.
      const environment = {
        environment: "staging",
        suffix: "",
        defined: ["staging"],
        renderOthers: () => Promise.resolve(`render ${renders++}`),
      };
      const drifted = report("Deployment", [
        {
          field: "source_revision_config.image_uri",
          class: "revision",
          old: "img:live",
          new: "img:git",
          origin: "drift",
        },
      ]);
      await expect(writeDriftEdits(dir, drifted, environment)).rejects.toMatchObject({
        code: "drift-write-unsafe",
      });
      expect(await readFile(join(dir, "a.yaml"), "utf8")).toBe(text);
      // The same render before and after: the value is written (into the base: no other environment).
      renders = 0;
      environment.renderOthers = () => Promise.resolve("same");
      const { written } = await writeDriftEdits(dir, drifted, environment);
      expect(written.map((w) => w.into)).toEqual(["spec.source_revision_config.image_uri"]);
      expect(await readFile(join(dir, "a.yaml"), "utf8")).toBe(text.replace("img:git", "img:live"));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
