import { describe, expect, it } from "vitest";
import { createSecretRedactor } from "../../src/api/secret-redactor.js";
import type { Plan, PlannedChange } from "../../src/diff/plan/plan-types.js";
import { hideLiveSecrets, liveAsShown } from "../../src/reconcile/plan/live-secrets.js";

// What a plan shows of live has the run's secrets redacted, whole forms only (docs/security.md,
// "Live values"): a live URL that merely starts as a secret does is shown as it is.

const SECRET = "https://internal.example/t0k3n-9f3e";
const change = (old: unknown): PlannedChange => ({
  kind: "Deployment",
  name: "alpha",
  file: "alpha.yaml",
  line: 2,
  action: "update",
  id: "d-1",
  new_revision: true,
  revision_fields: ["source_revision_config.repo_ref"],
  in_place_fields: [],
  request: { method: "PATCH", path: "/v2/deployments/d-1", body: { note: SECRET } },
  diff: [],
  errors: [{ field: "x", message: `live says ${SECRET}` }],
  warnings: [],
  changed_secrets: [],
  fields: [{ field: "source_revision_config.repo_ref", class: "revision", old, new: "main" }],
});
const plan = (old: unknown): Plan => ({ changes: [change(old)] }) as unknown as Plan;

describe("hideLiveSecrets", () => {
  const redactor = createSecretRedactor([SECRET]);

  it("redacts a live value holding a secret and marks the field, leaving git's request alone", () => {
    const [shown] = hideLiveSecrets(plan(`ref-${SECRET}`), redactor).changes;
    expect(shown!.fields![0]).toMatchObject({ old: "ref-[redacted]", live_redacted: true });
    expect(shown!.errors[0]!.message).toBe("live says [redacted]");
    expect(shown!.request!.body).toEqual({ note: SECRET }); // what apply sends
  });

  it("leaves a live URL that only starts like the secret as it is (no cut excerpt rule)", () => {
    const live = "https://github.com/acme/agent";
    expect(redactor.redact(live)).not.toBe(live); // the error-text rule would cut it
    const [shown] = hideLiveSecrets(plan(live), redactor).changes;
    expect(shown!.fields![0]!.old).toBe(live);
    expect(shown!.fields![0]!.live_redacted).toBeUndefined();
  });

  it("finds the secret in nested values and in live shown whole", () => {
    const [shown] = hideLiveSecrets(plan({ a: [SECRET] }), redactor).changes;
    expect(shown!.fields![0]!.old).toEqual({ a: ["[redacted]"] });
    const live = liveAsShown({ deployments: [{ name: "alpha", note: SECRET }] } as never, redactor);
    expect(JSON.stringify(live)).not.toContain("t0k3n");
  });
});
