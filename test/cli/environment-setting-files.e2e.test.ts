import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_TENANT_ID } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { assertBuilt, spawnCli } from "../support/built-cli.js";

// An Environment's {file: PATH} setting (api_key, tenant_id) and --api-key-file that name no
// regular file: a FIFO blocked the built CLI in its read for ever (a controller's every
// environment with it), /dev/zero or a huge file was read into memory without end. Each is now
// refused at once with api-config naming what the file is (never its content), before any
// request; a link to a regular file, and a key ending in CRLF, still work. The real CLI, against a
// real control plane.

const KEY = "setting-files-key-0123456789";
let plane: RunningControlPlane;
let dir: string;

const environment = (setting: string) => `apiVersion: plumb/v1
kind: Environment
metadata:
  name: staging
spec:
  api_url: {env: STAGING_API_URL}
  ${setting}
  mode: saas
`;
const DEPLOYMENT = `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: files-agent
spec:
  source: internal_container
  source_revision_config: {image_uri: "img/files:1"}
`;

/** The built CLI run to its end, or killed after 20 s (a read that blocks never ends). */
async function plumb(args: string[], env: NodeJS.ProcessEnv = {}) {
  const run = spawnCli(args, { STAGING_API_URL: plane.url, PLUMB_API_URL: plane.url, ...env });
  const timer = setTimeout(() => run.child.kill("SIGKILL"), 20_000);
  const code = await run.exited.finally(() => clearTimeout(timer));
  return { code, output: run.output(), killed: run.child.signalCode === "SIGKILL" };
}

async function planWith(setting: string) {
  await writeFile(join(dir, "environments", "staging.yaml"), environment(setting));
  return plumb(["plan", dir, "--env", "staging"]);
}

beforeAll(async () => {
  assertBuilt();
  plane = await startControlPlane({ apiKeys: [{ key: KEY, tenants: [DEFAULT_TENANT_ID] }] });
  dir = await mkdtemp(join(tmpdir(), "plumb-setting-files-"));
  await mkdir(join(dir, "environments"));
  await mkdir(join(dir, "key.dir"));
  await writeFile(join(dir, "agent.yaml"), DEPLOYMENT);
  execFileSync("mkfifo", [join(dir, "key.fifo")]);
  await writeFile(join(dir, "key.huge"), "k".repeat(100 * 1024));
  await writeFile(join(dir, "key.crlf"), `${KEY}\r\n`);
  await symlink(join(dir, "key.crlf"), join(dir, "key.link"));
  await writeFile(join(dir, "tenant.broken"), `${DEFAULT_TENANT_ID}\n\u001b[2Kx\n`);
});

afterAll(async () => {
  await plane.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("a setting file that is no regular file", () => {
  for (const [what, setting, reason] of [
    ["api_key: a FIFO", "api_key: {file: ../key.fifo}", "a FIFO (named pipe), not a regular file"],
    ["tenant_id: a FIFO", `api_key: {file: ../key.crlf}\n  tenant_id: {file: ../key.fifo}`, "a FIFO"],
    ["api_key: a directory", "api_key: {file: ../key.dir}", "a directory, not a regular file"],
    ["api_key: /dev/zero", "api_key: {file: /dev/zero}", "a device, not a regular file"],
    ["api_key: 100 KiB", "api_key: {file: ../key.huge}", "larger than 64 KiB"],
  ] as const)
    it(`${what}: refused at once (api-config), nothing read into the output`, async () => {
      const run = await planWith(setting);
      expect(run.killed, run.output).toBe(false);
      expect(run.code).toBe(1);
      expect(run.output).toContain(reason);
      expect(run.output).toContain("[api-config]");
      expect(run.output).not.toContain("kkkk");
    });

  it("--api-key-file naming a FIFO: refused at once", async () => {
    const plain = await mkdtemp(join(tmpdir(), "plumb-setting-files-plain-"));
    try {
      await writeFile(join(plain, "agent.yaml"), DEPLOYMENT);
      const run = await plumb(["plan", plain, "--api-key-file", join(dir, "key.fifo")]);
      expect(run.killed, run.output).toBe(false);
      expect(run.output).toContain("a FIFO (named pipe), not a regular file");
      expect(run.code).toBe(1);
    } finally {
      await rm(plain, { recursive: true, force: true });
    }
  });

  it("a link to a regular file whose key ends in CRLF is read, and plans", async () => {
    const run = await planWith("api_key: {file: ../key.link}");
    expect(run.output).toContain("files-agent");
    expect(run.code, run.output).toBe(0);
  });
});

describe("a tenant id an HTTP header cannot carry", () => {
  const refused = (output: string, source: string) => {
    expect(output).toContain(`the tenant id from ${source} holds a line break, a control character`);
    expect(output).toContain("[api-config]");
    expect(output).not.toContain("[network]");
  };

  it("from an Environment's file: refused at its file:line, not reported as a control plane not running", async () => {
    const run = await planWith("api_key: {file: ../key.crlf}\n  tenant_id: {file: ../tenant.broken}");
    refused(run.output, "environment staging's spec.tenant_id (environments/staging.yaml:8)");
    expect(run.code).toBe(1);
  });

  it("from PLUMB_TENANT_ID: refused the same way", async () => {
    const plain = await mkdtemp(join(tmpdir(), "plumb-setting-files-plain-"));
    try {
      await writeFile(join(plain, "agent.yaml"), DEPLOYMENT);
      const run = await plumb(["plan", plain], { PLUMB_API_KEY: KEY, PLUMB_TENANT_ID: "a\u0007b" });
      refused(run.output, "PLUMB_TENANT_ID");
      expect(run.code).toBe(1);
    } finally {
      await rm(plain, { recursive: true, force: true });
    }
  });
});
