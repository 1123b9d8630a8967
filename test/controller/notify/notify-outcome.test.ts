import { describe, expect, it } from "vitest";
import { failureNotification, notificationFor } from "../../../src/controller/notify/notify-outcome.js";
import type { ReconcileOutcome } from "../../../src/reconcile/reconcile-object.js";
import type { PlannedChange } from "../../../src/diff/plan/plan-types.js";

const change = {
  kind: "Deployment",
  name: "alpha",
  action: "update",
  revision_fields: ["source_revision_config.image_uri"],
  in_place_fields: ["description"],
} as unknown as PlannedChange;

const outcome = (extra: Partial<ReconcileOutcome>): ReconcileOutcome => ({
  ok: true,
  action: "update",
  result: "applied",
  drift: null,
  apply: null,
  change,
  ...extra,
});

const input = (o: ReconcileOutcome, reason: "change" | "drift" = "change", failuresBefore = 0) => ({
  kind: "Deployment",
  name: "alpha",
  reason,
  outcome: o,
  failuresBefore,
  id: "dep-1",
  revision: "rev-1",
});

describe("which reconciles notify", () => {
  it("names applied, drift-detected and drift-healed with the fields involved", () => {
    expect(notificationFor(input(outcome({})))).toMatchObject({
      event: "applied",
      fields: ["source_revision_config.image_uri", "description"],
      message: "updated and converged",
    });
    expect(notificationFor(input(outcome({ action: "create" })))?.message).toBe("created");
    expect(
      notificationFor(input(outcome({ result: "drift-reported", drift: "differs" }), "drift"))?.event,
    ).toBe("drift-detected");
    expect(notificationFor(input(outcome({ drift: "differs" }), "drift"))?.event).toBe("drift-healed");
  });

  it("says nothing for an object already in sync, a shutdown interrupt, or a retry of a failure", () => {
    expect(notificationFor(input(outcome({ result: "in-sync", action: "noop" })))).toBeNull();
    expect(notificationFor(input(outcome({ ok: false, result: "interrupted" })))).toBeNull();
    expect(notificationFor(input(outcome({ ok: false, result: "timeout" }), "change", 3))).toBeNull();
    expect(notificationFor(input(outcome({ ok: false, result: "timeout" }), "change", 0))).toMatchObject({
      event: "failed",
      message: "timeout",
    });
    expect(
      failureNotification({
        kind: "Deployment",
        name: "a",
        message: "401",
        failuresBefore: 1,
        id: null,
        revision: null,
      }),
    ).toBeNull();
    expect(
      failureNotification({
        kind: "Deployment",
        name: "a",
        message: "401",
        failuresBefore: 0,
        id: null,
        revision: null,
      }),
    ).toMatchObject({ event: "failed", message: "401" });
  });
});
