import { describe, expect, it } from "vitest";
import { buildNotifyPayload } from "../../../src/controller/notify/notify-payload.js";

describe("buildNotifyPayload with environments", () => {
  const event = {
    event: "failed" as const,
    object: { kind: "Deployment", name: "alpha" },
    id: null,
    revision: null,
    fields: [],
    message: "control plane unreachable",
  };

  it("names the environment in the event and in its text", () => {
    const payload = buildNotifyPayload({ ...event, environment: "prod" }, undefined, 0);
    expect(payload.environment).toBe("prod");
    expect(payload.text).toBe("❌ plumb: Deployment alpha in prod failed: control plane unreachable");
  });

  it("says nothing of environments without one", () => {
    const payload = buildNotifyPayload(event, undefined, 0);
    expect(payload).not.toHaveProperty("environment");
    expect(payload.text).toBe("❌ plumb: Deployment alpha failed: control plane unreachable");
  });
});
