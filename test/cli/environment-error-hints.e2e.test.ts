import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planCommand } from "../../src/cli/sync/plan.js";
import { promoteCommand } from "../../src/cli/sync/promote.js";
import { freePort } from "../support/free-port.js";
import { prodImage, promotionRepo, stopPromotion } from "../support/promotion-repo.js";
import { plain, runCommand, startTwoPlanes, type TwoPlanes } from "./two-planes.js";

// An environment's control plane refusing its key, or not answering, says which Environment
// setting to check. With environments the client's settings come from each Environment document
// (PLUMB_API_KEY and PLUMB_API_URL are not read), but the errors said "check PLUMB_API_KEY (or
// --api-key-file)" and "check PLUMB_API_URL", sending the user to a variable that changes nothing.
// Two real control planes; no key is ever printed.

let planes: TwoPlanes;
let dir: string;
const WRONG_KEY = "wrong-key-0123456789";

/** The command's error (it throws) and its output. */
async function failing(build: typeof planCommand, args: string[], env: Record<string, string>) {
  let out = "";
  const keep: typeof planCommand = (io) => build({ ...io!, stdout: { write: (t: string) => (out += t) } });
  const error = await runCommand(keep, args, planes, env).then(
    () => undefined,
    (e: Error) => e,
  );
  return { out, message: error?.message ?? "" };
}

beforeAll(async () => {
  planes = await startTwoPlanes();
  // prod's override already names staging's image: promote reads prod to see whether it runs it.
  const files = { "agent.yaml": `${plain("agent")}${prodImage("img/agent:1")}` };
  dir = await promotionRepo(planes, files, { prefix: "plumb-environment-hints-" });
});

afterAll(() => stopPromotion(planes, dir));

describe("an environment's API errors name its own settings", () => {
  it("plan --env prod with a key its control plane refuses: check prod's spec.api_key ($PROD_API_KEY)", async () => {
    const { message } = await failing(planCommand, [dir, "--env", "prod"], { PROD_API_KEY: WRONG_KEY });
    expect(message).toContain("401");
    expect(message).toContain(
      "check environment prod's spec.api_key ($PROD_API_KEY, environments/prod.yaml:7)",
    );
    expect(message).not.toContain("PLUMB_API_KEY");
    expect(message).not.toContain(WRONG_KEY);
  });

  it("plan --env staging with nothing at its URL: check staging's spec.api_url ($STAGING_API_URL)", async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const { message } = await failing(planCommand, [dir, "--env", "staging"], { STAGING_API_URL: closed });
    expect(message).toContain(`nothing accepts connections at ${closed}`);
    expect(message).toContain(
      "check environment staging's spec.api_url ($STAGING_API_URL, environments/staging.yaml:6)",
    );
    expect(message).not.toContain("PLUMB_API_URL");
  });

  it("promote: the source's refusal names the source's key, the target's the target's", async () => {
    const source = await failing(promoteCommand, [dir, "--to", "prod"], { STAGING_API_KEY: WRONG_KEY });
    expect(source.message).toContain(
      "check environment staging's spec.api_key ($STAGING_API_KEY, environments/staging.yaml:7)",
    );
    expect(source.message).not.toContain("PLUMB_API_KEY");

    let out = "";
    const keep: typeof promoteCommand = (io) =>
      promoteCommand({ ...io!, stdout: { write: (t: string) => (out += t) } });
    const ran = await runCommand(keep, [dir, "--to", "prod"], planes, { PROD_API_KEY: WRONG_KEY });
    expect(ran.code).toBe(0);
    expect(out).toContain("agent: at that version in git, not running it yet");
    expect(out).toContain("check environment prod's spec.api_key ($PROD_API_KEY, environments/prod.yaml:7)");
    expect(out).not.toContain("PLUMB_API_KEY");
    expect(out).not.toContain(WRONG_KEY);
  });
});
