import type { Command } from "commander";
import { DEFAULT_TENANT_ID } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import type { ApplyIo } from "../../src/cli/sync/apply.js";
import { TEST_POLL } from "./reconcile-helpers.js";
import { containerManifest } from "../support/manifest-text.js";

// The frame of the CLI's environment tests: two real control planes on loopback, staging and prod,
// each granting its own key, an Environment document naming each by environment variables, and a
// command run in the test's own process with those variables.

export const STAGING_KEY = "staging-key-0123456789abcdef";
export const PROD_KEY = "prod-key-0123456789abcdef0123";

export type TwoPlanes = { staging: RunningControlPlane; prod: RunningControlPlane };

/** An Environment whose api_url and api_key come from NAME_API_URL and NAME_API_KEY. */
export const environmentDoc = (name: string, extra = "") => `apiVersion: plumb/v1
kind: Environment
metadata:
  name: ${name}
spec:
  api_url: {env: ${name.toUpperCase()}_API_URL}
  api_key: {env: ${name.toUpperCase()}_API_KEY}
  mode: saas
${extra}`;

export async function startTwoPlanes(): Promise<TwoPlanes> {
  const grant = (key: string) => ({ apiKeys: [{ key, tenants: [DEFAULT_TENANT_ID] }] });
  const fast = { revisionSeconds: 0, deploymentReadySeconds: 0 };
  const staging = await startControlPlane({ ...fast, ...grant(STAGING_KEY) });
  const prod = await startControlPlane({ ...fast, ...grant(PROD_KEY) });
  return { staging, prod };
}

/** What a command's io gives it: output sinks, no terminal, no signal handling, the environment. */
export type CommandIo = {
  stdout: { write: (text: string) => unknown };
  stderr: { write: (text: string) => unknown };
  stdin: { isTTY: boolean };
  signals: { once: () => NodeJS.Process; removeListener: () => NodeJS.Process };
  env: Record<string, string>;
  /** An apply's revision reads (TEST_POLL): other commands ignore it. */
  poll: ApplyIo["poll"];
};

/** Runs one command in this process against both planes; `env` adds to or overrides their variables. */
export async function runCommand(
  build: (io: CommandIo) => Command,
  args: string[],
  { staging, prod }: TwoPlanes,
  env: Record<string, string> = {},
): Promise<{ out: string; err: string; code: number | string | undefined }> {
  let out = "";
  let err = "";
  process.exitCode = 0;
  const io: CommandIo = {
    stdout: { write: (t) => (out += t) },
    stderr: { write: (t) => (err += t) },
    stdin: { isTTY: false },
    signals: { once: () => process, removeListener: () => process },
    poll: TEST_POLL,
    env: {
      STAGING_API_URL: staging.url,
      STAGING_API_KEY: STAGING_KEY,
      PROD_API_URL: prod.url,
      PROD_API_KEY: PROD_KEY,
      PLUMB_API_URL: "http://127.0.0.1:9", // never used with environments
      NO_COLOR: "1",
      ...env,
    },
  };
  await build(io).parseAsync(args, { from: "user" });
  const code = process.exitCode;
  process.exitCode = 0;
  return { out, err, code };
}

/** An internal_container Deployment with no secret. */
export const plain = containerManifest;

/** The same with a secret from $AGENT_TOKEN and a literal one (MODE), then `overrides` (YAML). */
export const withSecrets = (name: string, literal: string, overrides = "") => `${plain(name)}  secrets:
    - name: API_TOKEN
      valueFrom: {env: AGENT_TOKEN}
    - name: MODE
      value: ${literal}
${overrides}`;
