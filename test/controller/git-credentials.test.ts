import { execFile } from "node:child_process";
import { access, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGitCredentials } from "../../src/status/git-credentials.js";

const run = promisify(execFile);
let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "plumb-askpass-test-"));
});
afterEach(() => rm(home, { recursive: true, force: true }));

/** Asks git itself for credentials, as it does before an HTTPS request: it prompts through GIT_ASKPASS. */
async function gitCredentialFill(env: Record<string, string>): Promise<Record<string, string>> {
  const child = execFile("git", ["credential", "fill"], {
    // HOME is a fresh directory and system config is off: no credential helper of this machine answers
    env: { ...env, GIT_CONFIG_NOSYSTEM: "1", HOME: home },
  });
  child.stdin!.end("protocol=https\nhost=git.example.com\npath=acme/manifests.git\n\n");
  let out = "";
  child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  if (code !== 0) throw new Error(`git credential fill exited ${code}`);
  const fields: Record<string, string> = {};
  for (const line of out.trim().split("\n")) {
    const at = line.indexOf("=");
    fields[line.slice(0, at)] = line.slice(at + 1);
  }
  return fields;
}

describe("git credentials (GIT_ASKPASS)", () => {
  it("answers git's username and password prompts with x-access-token and the token", async () => {
    const creds = await createGitCredentials({ PATH: process.env.PATH, PLUMB_GIT_TOKEN: "ghp_secret123" });
    try {
      expect(await gitCredentialFill(creds.env)).toMatchObject({
        username: "x-access-token",
        password: "ghp_secret123",
      });
      // the script itself holds no secret: it reads the token from git's environment at run time
      expect(await readFile(creds.env.GIT_ASKPASS!, "utf8")).not.toContain("ghp_secret123");
    } finally {
      await creds.dispose();
    }
    await expect(access(creds.env.GIT_ASKPASS!)).rejects.toThrow();
  });

  it("uses PLUMB_GIT_USERNAME when given, passes only a few variables, and adds no askpass without a token", async () => {
    const creds = await createGitCredentials({
      PATH: process.env.PATH,
      PLUMB_GIT_TOKEN: "glpat-abc",
      PLUMB_GIT_USERNAME: "deploy-bot",
      PLUMB_API_KEY: "not-for-git",
    });
    try {
      expect(await gitCredentialFill(creds.env)).toMatchObject({
        username: "deploy-bot",
        password: "glpat-abc",
      });
      expect(creds.env.PLUMB_API_KEY).toBeUndefined();
      expect(creds.env.GIT_TERMINAL_PROMPT).toBe("0");
    } finally {
      await creds.dispose();
    }
    const none = await createGitCredentials({ PATH: process.env.PATH });
    expect(none.env.GIT_ASKPASS).toBeUndefined();
    await run("git", ["--version"], { env: none.env });
  });
});
