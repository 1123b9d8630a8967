import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.js";
import { promoteCommand } from "../../src/cli/sync/promote.js";
import { DEFAULT_TENANT_ID } from "../../src/control-plane/options.js";
import { startControlPlane } from "../../src/control-plane/server.js";
import { prodImage, promotionRepo, stopPromotion } from "../support/promotion-repo.js";
import { plain, PROD_KEY, runCommand, STAGING_KEY, type TwoPlanes } from "./two-planes.js";

// The soak gate against staging's real control plane, whose clock the test sets: the revision's
// updated_at and the Date header of the answer are both that clock's. A Date header counts whole
// seconds, so a revision DEPLOYED at 12:00:00.900 reads as 900 ms in the future of an answer sent
// in that same second: `soak: 0s` was refused ("deployed 0s ago …; 0s needed") whenever promote
// followed the deployment within its second. An updated_at that is truly ahead of the control
// plane's clock (its clock set back) is refused saying the clocks disagree, not "deployed 0s ago".

let planes: TwoPlanes;
let dir: string;
/** Staging's time: frozen at this instant when set. */
let frozen: number | null = null;
const stagingClock = { now: () => frozen ?? Date.now(), sleep: systemClock.sleep };

const promote = async () => {
  let out = "";
  let error: (Error & { code?: string }) | undefined;
  const keep: typeof promoteCommand = (io) =>
    promoteCommand({ ...io!, stdout: { write: (t: string) => (out += t) } });
  await runCommand(keep, [dir, "--to", "prod"], planes).catch((e: Error) => (error = e));
  return { out, error };
};

beforeAll(async () => {
  const grant = (key: string) => ({ apiKeys: [{ key, tenants: [DEFAULT_TENANT_ID] }] });
  const fast = { revisionSeconds: 0, deploymentReadySeconds: 0 };
  planes = {
    staging: await startControlPlane({ ...fast, clock: stagingClock, ...grant(STAGING_KEY) }),
    prod: await startControlPlane({ ...fast, ...grant(PROD_KEY) }),
  };
  // Staging deploys 900 ms into a second, and its clock stays there.
  frozen = Math.floor(Date.now() / 1000) * 1000 + 900;
  const files = { "agent.yaml": `${plain("agent")}${prodImage("img/agent:0")}` };
  dir = await promotionRepo(planes, files, {
    prefix: "plumb-promote-soak-clock-",
    gates: "{deployed: true, soak: 0s}",
  });
});

afterAll(() => stopPromotion(planes, dir));

describe("promote's soak gate on the control plane's clock", () => {
  it("soak: 0s holds for a revision DEPLOYED in the same second as the answer", async () => {
    const { out, error } = await promote();
    expect(out).toMatch(/✓ soak holds: deployed 0s ago \(at \S+\.900Z, control plane\); 0s needed/);
    expect(error).toBeUndefined();
    expect(out).toContain("agent: would be promoted");
  });

  it("an updated_at ahead of the control plane's clock by more than its Date's second is refused as such", async () => {
    frozen = frozen! - 10 * 60_000;
    const { out, error } = await promote();
    expect(error?.code).toBe("promotion-blocked");
    expect(out).toMatch(
      /✗ soak fails: its updated_at \S+\.900Z is 10m ahead of the control plane's time \(\S+\.000Z\): the clocks disagree, so how long it has soaked is unknown; 0s needed/,
    );
    expect(out).not.toContain("deployed 0s ago");
  });
});
