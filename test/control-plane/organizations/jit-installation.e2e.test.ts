import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../../src/control-plane/server.js";
import { assertBuilt, runCli } from "../../support/built-cli.js";

// Spec 5.4 rule 6: SELF_HOSTED_JIT_PROVISIONING_ENABLED=false disables JIT for every organization,
// whatever its own setting. Seen from plumb: an OrganizationAccess asking for JIT is shown as a
// change (live says false) and apply fails naming the variable, instead of a PATCH answered `true`
// while every sign-in is denied JIT.

let cp: RunningControlPlane;
let dir: string;
beforeAll(async () => {
  assertBuilt();
  cp = await startControlPlane({ mode: "self-hosted", selfHostedJitProvisioningEnabled: false });
  dir = await mkdtemp(join(tmpdir(), "plumb-jit-installation-"));
  await writeFile(
    join(dir, "organization.yaml"),
    "apiVersion: plumb/v1\nkind: OrganizationAccess\nmetadata: {name: acme}\nspec: {jit_provisioning_enabled: true}\n",
  );
});
afterAll(async () => {
  await cp.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("an OrganizationAccess asking for JIT on an installation that disables it", () => {
  it("plans the change from false, and apply fails naming the variable", async () => {
    const env = {
      PLUMB_API_URL: cp.url,
      PLUMB_PLATFORM_URL: cp.url,
      PLUMB_API_KEY: DEFAULT_API_KEY,
      PLUMB_STATUS_DIR: join(dir, ".status"),
    };
    const planned = await runCli(["plan", dir], env, dir);
    expect(planned.output).toMatch(/jit_provisioning_enabled: false → true/);
    const applied = await runCli(["apply", dir, "--yes"], env, dir);
    expect(applied.code, applied.output).not.toBe(0);
    expect(applied.output).toContain("SELF_HOSTED_JIT_PROVISIONING_ENABLED=false");
    const info = await fetch(`${cp.url}/api/v1/orgs/current/info`, {
      headers: { "x-api-key": DEFAULT_API_KEY },
    });
    expect(((await info.json()) as { jit_provisioning_enabled: boolean }).jit_provisioning_enabled).toBe(
      false,
    );
  });
});
