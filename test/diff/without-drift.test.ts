import { describe, expect, it } from "vitest";
import type { FieldChange, PlannedChange, PlannedUpload } from "../../src/diff/plan/plan-types.js";
import { SOURCE_TARBALL_FIELD } from "../../src/diff/plan/plan-types.js";
import { driftFields, withoutDrift } from "../../src/diff/three-way.js";

// withoutDrift: what a controller without --self-heal sends. The held fields (drift, unknown) keep
// their live value: out of the body, or, inside resource_spec (sent whole), back to the live value.

const field = (
  name: string,
  cls: FieldChange["class"],
  origin: FieldChange["origin"],
  old: unknown,
  value: unknown,
): FieldChange => ({ field: name, class: cls, origin, old, new: value });

function update(
  body: Record<string, unknown>,
  fields: FieldChange[],
  more: Partial<PlannedChange> = {},
): PlannedChange {
  return {
    kind: "Deployment",
    name: "web",
    file: "web.yaml",
    line: 1,
    action: "update",
    id: "d1",
    new_revision: fields.some((f) => f.class === "revision"),
    revision_fields: fields.filter((f) => f.class === "revision").map((f) => f.field),
    in_place_fields: fields.filter((f) => f.class === "in_place").map((f) => f.field),
    request: { method: "PATCH", path: "/v2/deployments/d1", body },
    diff: [],
    errors: [],
    warnings: [],
    changed_secrets: [],
    fields,
    ...more,
  };
}

const IMAGE = "source_revision_config.image_uri";
const URL = "source_config.custom_url";
const CPU = "source_config.resource_spec.cpu";
const SCALE = "source_config.resource_spec.max_scale";

describe("withoutDrift", () => {
  it("returns the change itself when nothing is held", () => {
    const change = update({ source_revision_config: { image_uri: "img:2" } }, [
      field(IMAGE, "revision", "change", "img:1", "img:2"),
    ]);
    expect(withoutDrift(change)).toBe(change);
    const unclassified = update({ source_revision_config: { image_uri: "img:2" } }, [
      field(IMAGE, "revision", undefined, "img:1", "img:2"),
    ]);
    expect(withoutDrift(unclassified)).toBe(unclassified);
  });

  it("a refused change (no request) is left as it is, held fields and all", () => {
    const refused: PlannedChange = {
      ...update({}, [
        field("source_config.listener_id", "immutable", "change", "l1", "l2"),
        field(URL, "in_place", "drift", "https://live", "https://git"),
      ]),
      action: "refused",
      request: null,
    };
    expect(withoutDrift(refused)).toBe(refused);
  });

  it("a held in-place field leaves the body, its empty section too; the revision field stays", () => {
    const change = update(
      { source_config: { custom_url: "https://git" }, source_revision_config: { image_uri: "img:2" } },
      [
        field(URL, "in_place", "drift", "https://live", "https://git"),
        field(IMAGE, "revision", "conflict", "a", "img:2"),
      ],
    );
    const out = withoutDrift(change);
    expect(out.action).toBe("update");
    expect(out.request?.body).toStrictEqual({ source_revision_config: { image_uri: "img:2" } });
    expect(out.fields?.map((f) => f.field)).toEqual([IMAGE]);
    expect(out.revision_fields).toEqual([IMAGE]);
    expect(out.in_place_fields).toEqual([]);
    expect(out.new_revision).toBe(true);
    expect(change.request?.body).toHaveProperty("source_config"); // the change itself is left as it was
  });

  it("a held revision field leaves the body with revision_source; the in-place change stays", () => {
    const change = update(
      {
        source_config: { custom_url: "https://git" },
        source_revision_config: { image_uri: "img:2" },
        revision_source: "internal_container",
      },
      [
        field(URL, "in_place", "change", null, "https://git"),
        field(IMAGE, "revision", "unknown", "img:1", "img:2"),
      ],
    );
    const out = withoutDrift(change);
    expect(out.request?.body).toStrictEqual({ source_config: { custom_url: "https://git" } });
    expect(out.revision_fields).toEqual([]);
    expect(out.in_place_fields).toEqual([URL]);
    expect(out.new_revision).toBe(false);
  });

  it("with one revision and one in-place field still sent, it is an update with both", () => {
    const body = {
      source_config: { custom_url: "https://git" },
      source_revision_config: { image_uri: "img:2" },
      secret_references: [{ name: "A", secret_name: "s", secret_key: "k" }],
      revision_source: "internal_container",
    };
    const out = withoutDrift(
      update(body, [
        field(URL, "in_place", "change", null, "https://git"),
        field(IMAGE, "revision", "change", "img:1", "img:2"),
        field("secret_references", "in_place", "drift", [], body.secret_references),
      ]),
    );
    expect(out.action).toBe("update");
    expect(out.request?.body).toStrictEqual({
      source_config: { custom_url: "https://git" },
      source_revision_config: { image_uri: "img:2" },
      revision_source: "internal_container",
    });
    expect(out.revision_fields).toEqual([IMAGE]);
    expect(out.in_place_fields).toEqual([URL]);
  });

  it("everything held: a noop with no request, no field lists, no revision", () => {
    const out = withoutDrift(
      update(
        { source_config: { custom_url: "https://git" }, source_revision_config: { image_uri: "img:2" } },
        [
          field(URL, "in_place", "drift", "https://live", "https://git"),
          field(IMAGE, "revision", "unknown", "img:1", "img:2"),
        ],
      ),
    );
    expect(out).toMatchObject({
      action: "noop",
      request: null,
      fields: [],
      revision_fields: [],
      in_place_fields: [],
      new_revision: false,
    });
  });

  it("a held resource_spec sub-field goes back to its live value (or away) in the whole resource_spec sent", () => {
    const change = update(
      {
        source_config: {
          custom_url: "https://git",
          resource_spec: { cpu: 2, max_scale: 5, memory_mb: 512, queue_cpu: 1, min_scale: 3 },
        },
      },
      [
        field(URL, "in_place", "change", null, "https://git"),
        field(CPU, "revision", "drift", 1, 2),
        field("source_config.resource_spec.queue_cpu", "revision", "drift", null, 1),
        field("source_config.resource_spec.min_scale", "revision", "unknown", undefined, 3),
        field(SCALE, "revision", "change", 1, 5),
      ],
    );
    const out = withoutDrift(change);
    expect(out.request?.body).toStrictEqual({
      source_config: { custom_url: "https://git", resource_spec: { cpu: 1, max_scale: 5, memory_mb: 512 } },
    });
    expect(out.revision_fields).toEqual([SCALE]);
    expect(out.in_place_fields).toEqual([URL]);
  });

  it("resource_spec leaves the body when none of its fields is sent any more", () => {
    const out = withoutDrift(
      update({ source_config: { custom_url: "https://git", resource_spec: { cpu: 2 } } }, [
        field(CPU, "revision", "drift", 1, 2),
        field(URL, "in_place", "change", null, "https://git"),
      ]),
    );
    expect(out.request?.body).toStrictEqual({ source_config: { custom_url: "https://git" } });
  });

  it("a held field missing from the body is no error", () => {
    const out = withoutDrift(
      update({ source_revision_config: { image_uri: "img:2" } }, [
        field(CPU, "revision", "drift", 1, 2),
        field(URL, "in_place", "drift", "https://live", "https://git"),
        field(IMAGE, "revision", "change", "img:1", "img:2"),
      ]),
    );
    expect(out.request?.body).toStrictEqual({ source_revision_config: { image_uri: "img:2" } });
  });

  it("a held upload is not made; an upload still wanted is kept", () => {
    const upload: PlannedUpload = {
      source_path: "./app",
      digest: "sha256:b",
      previous_digest: "sha256:a",
      reason: "replaced",
    };
    const body = {
      source_config: { custom_url: "https://git" },
      source_revision_config: { source_tarball_path: "<upload>" },
    };
    const heldUpload = withoutDrift(
      update(
        body,
        [
          field(SOURCE_TARBALL_FIELD, "revision", "drift", "sha256:a", "sha256:b"),
          field("secret_references", "in_place", "drift", null, []),
          field(URL, "in_place", "change", null, "https://git"),
        ],
        { upload },
      ),
    );
    expect(heldUpload).not.toHaveProperty("upload");
    expect(heldUpload.request?.body).toStrictEqual({ source_config: { custom_url: "https://git" } });
    const keptUpload = withoutDrift(
      update(
        body,
        [
          field(SOURCE_TARBALL_FIELD, "revision", "change", "sha256:a", "sha256:b"),
          field(URL, "in_place", "drift", null, "https://git"),
        ],
        { upload },
      ),
    );
    expect(keptUpload.upload).toEqual(upload);
  });

  it("held secrets leave changed_secrets empty; secrets still sent keep it", () => {
    const body = { secrets: [{ name: "A", value: "a" }], source_config: { custom_url: "https://git" } };
    const secrets = (origin: FieldChange["origin"], urlOrigin: FieldChange["origin"]) =>
      withoutDrift(
        update(
          body,
          [
            field("secrets", "revision", origin, ["A"], ["A"]),
            field("secret_references", "in_place", "drift", null, []),
            field(URL, "in_place", urlOrigin, null, "https://git"),
          ],
          { changed_secrets: ["A"] },
        ),
      );
    const held = secrets("drift", "change");
    expect(held.changed_secrets).toEqual([]);
    expect(held.request?.body).toStrictEqual({ source_config: { custom_url: "https://git" } });
    expect(secrets("change", "drift").changed_secrets).toEqual(["A"]);
  });
});

describe("driftFields", () => {
  it("holds drift and unknown fields, not changes, conflicts or unclassified fields", () => {
    const fields = [
      field("a", "in_place", "drift", 1, 2),
      field("b", "in_place", "unknown", 1, 2),
      field("c", "in_place", "change", 1, 2),
      field("d", "in_place", "conflict", 1, 2),
      field("e", "in_place", undefined, 1, 2),
    ];
    expect(driftFields(update({}, fields)).map((f) => f.field)).toEqual(["a", "b"]);
  });
});
