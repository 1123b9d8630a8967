import { describe, expect, it } from "vitest";
import { createSecretRedactor, REDACTED } from "../../src/api/secret-redactor.js";
import type { Plan, PlannedChange } from "../../src/diff/plan/plan-types.js";
import { hideLiveSecrets } from "../../src/reconcile/plan/live-secrets.js";

// A hostile control plane puts a secret, cut short, into a live field (an image tag of 20 of the
// API key's characters, a field it truncates). Live values were redacted whole forms only, so the
// cut one was shown by plan and drift (a PR comment) and drift --write wrote it into git.

const KEY = "lsv2_pt_0123456789abcdef0123456789abcdef";
const change = (old: unknown): PlannedChange =>
  ({
    kind: "Deployment",
    name: "alpha",
    file: "alpha.yaml",
    line: 2,
    action: "update",
    id: "d-1",
    new_revision: true,
    revision_fields: [],
    in_place_fields: [],
    diff: [],
    errors: [],
    warnings: [],
    changed_secrets: [],
    fields: [{ field: "source_revision_config.image_uri", class: "revision", old, new: "img:1" }],
  }) as unknown as PlannedChange;
const shown = (old: string) =>
  hideLiveSecrets({ changes: [change(old)] } as unknown as Plan, createSecretRedactor([KEY])).changes[0]!
    .fields![0]!;

describe("a live value holding a secret cut short", () => {
  it("is redacted from 16 characters anywhere, and from 8 where it ends the value", () => {
    for (const live of [`img:${KEY.slice(0, 20)}-x`, `img:${KEY.slice(0, 16)}`, `img:${KEY.slice(0, 9)}`]) {
      const field = shown(live);
      expect(field.old).toContain(REDACTED);
      expect(field.old).not.toContain(KEY.slice(0, 9));
      expect(field.live_redacted).toBe(true);
    }
  });

  it("keeps a value that only shares a secret's first 8 to 15 characters", () => {
    expect(shown(`img:${KEY.slice(0, 12)}-other`).old).toBe(`img:${KEY.slice(0, 12)}-other`);
    const url = createSecretRedactor(["https://internal.example/t0k3n-9f3e"]);
    expect(url.redactWhole("https://github.com/acme/agent")).toBe("https://github.com/acme/agent");
  });
});

describe("a live URL with credentials before its host (a secret the run does not know)", () => {
  const redactor = createSecretRedactor();
  it("has them redacted, and the field marked so drift --write and promote never write it", () => {
    const field = hideLiveSecrets(
      { changes: [change("https://robot:s3cr3t-pw-0001@registry.example/img:2")] } as unknown as Plan,
      redactor,
    ).changes[0]!.fields![0]!;
    expect(field.old).toBe(`https://${REDACTED}@registry.example/img:2`);
    expect(field.live_redacted).toBe(true);
    expect(redactor.redactWhole("git+https://ghp_0123456789abcdefABCDEF0123456789abcd@github.com/a/b")).toBe(
      `git+https://${REDACTED}@github.com/a/b`,
    );
  });

  it("keeps a plain user name, a URL without userinfo and an @ after the host", () => {
    for (const kept of [
      "ssh://git@github.com/acme/agent.git",
      "https://github.com/acme/agent",
      "https://registry.example/img@sha256:0123",
      "img/alpha:1 and mailto:a@b.example",
    ])
      expect(redactor.redactWhole(kept)).toBe(kept);
  });
});
