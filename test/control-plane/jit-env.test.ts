import { describe, expect, it } from "vitest";
import { controlPlaneCommand } from "../../src/cli/control-plane/control-plane.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { startControlPlane } from "../../src/control-plane/server.js";

// SELF_HOSTED_JIT_PROVISIONING_ENABLED is read once, at the CLI edge, and travels to the
// organizations module as an option; the library itself never reads the environment.

const ORG = "/api/v1/orgs/current";

async function signIn(url: string, email: string) {
  const response = await fetch(`${url}${ORG}/sso/sign-in`, {
    method: "POST",
    headers: { "x-api-key": DEFAULT_API_KEY, "content-type": "application/json" },
    body: JSON.stringify({ email }),
  });
  return { status: response.status, body: (await response.json()) as { via?: string; detail?: string } };
}

/** Runs the real `plumb control-plane` command with `env`, hands its URL to `use`, then stops it. */
async function withCommand(env: NodeJS.ProcessEnv, use: (url: string) => Promise<void>) {
  let out = "";
  let stop!: (signal: string) => void;
  const stopped = new Promise<string>((resolve) => (stop = resolve));
  const command = controlPlaneCommand({ write: (t: string) => (out += t) }, () => stopped, env);
  const level = process.env.PLUMB_LOG_LEVEL;
  process.env.PLUMB_LOG_LEVEL = "silent";
  const running = command.parseAsync(["--port", "0", "--mode", "self-hosted"], { from: "user" });
  try {
    await expect.poll(() => out, { interval: 5 }).toContain("state:");
    await use(/listening on (\S+)/.exec(out)?.[1] ?? "");
  } finally {
    stop("SIGTERM");
    await running;
    if (level === undefined) delete process.env.PLUMB_LOG_LEVEL;
    else process.env.PLUMB_LOG_LEVEL = level;
  }
}

describe("SELF_HOSTED_JIT_PROVISIONING_ENABLED from the CLI edge", () => {
  it("=false (any case) at the command turns JIT off at sign-in", async () => {
    await withCommand({ SELF_HOSTED_JIT_PROVISIONING_ENABLED: "False" }, async (url) => {
      const denied = await signIn(url, "hal@x.io");
      expect(denied.status).toBe(403);
      expect(denied.body.detail).toContain("SELF_HOSTED_JIT_PROVISIONING_ENABLED=false");
    });
  });

  it("unset at the command leaves JIT on", async () => {
    await withCommand({}, async (url) => {
      const granted = await signIn(url, "ida@x.io");
      expect(granted.status).toBe(200);
      expect(granted.body.via).toBe("jit");
    });
  });

  it("the library default is JIT on, whatever process.env says; the option turns it off", async () => {
    const saved = process.env.SELF_HOSTED_JIT_PROVISIONING_ENABLED;
    process.env.SELF_HOSTED_JIT_PROVISIONING_ENABLED = "false";
    const cp = await startControlPlane({ mode: "self-hosted" });
    const off = await startControlPlane({ mode: "self-hosted", selfHostedJitProvisioningEnabled: false });
    try {
      expect((await signIn(cp.url, "joe@x.io")).body.via).toBe("jit");
      expect((await signIn(off.url, "kim@x.io")).status).toBe(403);
    } finally {
      await cp.stop();
      await off.stop();
      if (saved === undefined) delete process.env.SELF_HOSTED_JIT_PROVISIONING_ENABLED;
      else process.env.SELF_HOSTED_JIT_PROVISIONING_ENABLED = saved;
    }
  });
});
