import { execFile } from "node:child_process";
import { access, mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { PlumbError } from "../../src/errors.js";
import { openManifestSource } from "../../src/controller/source/manifest-source.js";
import { createGitCredentials, withConfigEntries } from "../../src/git/git-credentials.js";
import { memoryLogger } from "../controller/support.js";

const run = promisify(execFile);
const REPO = "https://Git.Example.com:443/acme/manifests.git";
let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "plumb-askpass-test-"));
});
afterEach(() => rm(home, { recursive: true, force: true }));

/** Asks git itself for credentials, as it does before an HTTPS request: it prompts through GIT_ASKPASS. */
async function gitCredentialFill(
  env: Record<string, string>,
  request = "protocol=https\nhost=git.example.com\npath=acme/manifests.git\n",
): Promise<Record<string, string>> {
  const child = execFile("git", ["credential", "fill"], {
    // HOME is a fresh directory and system config is off: no credential helper of this machine answers
    env: { ...env, GIT_CONFIG_NOSYSTEM: "1", HOME: home },
  });
  child.stdin!.end(`${request}\n`);
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
    const creds = await createGitCredentials(
      { PATH: process.env.PATH, PLUMB_GIT_TOKEN: "ghp_secret123" },
      REPO,
    );
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
    const creds = await createGitCredentials(
      {
        PATH: process.env.PATH,
        PLUMB_GIT_TOKEN: "glpat-abc",
        PLUMB_GIT_USERNAME: "deploy-bot",
        PLUMB_API_KEY: "not-for-git",
      },
      REPO,
    );
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
    const none = await createGitCredentials({ PATH: process.env.PATH }, REPO);
    expect(none.env.GIT_ASKPASS).toBeUndefined();
    await run("git", ["--version"], { env: none.env });
  });

  it("answers only for the repository's origin: another host, port or scheme gets nothing", async () => {
    const creds = await createGitCredentials({ PATH: process.env.PATH, PLUMB_GIT_TOKEN: "ghp_scoped" }, REPO);
    try {
      expect(creds.env.PLUMB_GIT_ORIGIN).toBe("https://git.example.com");
      // The same origin written another way (git passes the host as the URL spells it)
      expect(
        await gitCredentialFill(creds.env, "protocol=https\nhost=GIT.example.com:443\npath=x.git\n"),
      ).toMatchObject({ password: "ghp_scoped" });
      for (const request of [
        "protocol=https\nhost=evil.example.com\npath=acme/manifests.git\n",
        "protocol=https\nhost=git.example.com:8443\n",
        "protocol=http\nhost=git.example.com\n",
        "protocol=https\nhost=git.example.com.evil.test\n",
      ]) {
        await expect(gitCredentialFill(creds.env, request), request).rejects.toThrow(/exited 128/);
      }
    } finally {
      await creds.dispose();
    }
  });

  it("tells git to follow no redirect, and adds no askpass for a URL that is not http(s)", async () => {
    const creds = await createGitCredentials(
      { PATH: process.env.PATH, PLUMB_GIT_TOKEN: "t" },
      "git@host:a/b",
    );
    expect(creds.env).toMatchObject({
      GIT_CONFIG_COUNT: "3",
      GIT_CONFIG_KEY_0: "http.followRedirects",
      GIT_CONFIG_VALUE_0: "false",
    });
    expect(creds.env.GIT_ASKPASS).toBeUndefined();
    expect(creds.env.PLUMB_GIT_TOKEN).toBeUndefined();
  });

  it("abandons a transfer from a server that accepted the connection and then says nothing", async () => {
    const silent = createServer(() => {}); // reads each request, never answers
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/acme/manifests.git`;
    const creds = await createGitCredentials({ PATH: process.env.PATH }, url);
    // plumb's own stall limit is 60 s; only its time is shortened here (a later entry wins), so
    // the abort comes from the limit plumb sets: without it git waits for ever (killed at 20 s).
    const env = withConfigEntries({ ...creds.env, HOME: home, GIT_CONFIG_NOSYSTEM: "1" }, [
      ["http.lowSpeedTime", "2"],
    ]);
    try {
      const started = Date.now();
      const failure = await run("git", ["clone", "-q", url, join(home, "clone")], {
        env,
        timeout: 20_000,
      }).then(
        () => "cloned",
        (error: { stderr?: string; killed?: boolean }) => (error.killed ? "killed" : String(error.stderr)),
      );
      expect(failure).toMatch(/Operation too slow/);
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      silent.closeAllConnections();
      silent.close();
      await creds.dispose();
    }
  }, 30_000);

  it("refuses a repository URL with credentials in it, naming PLUMB_GIT_TOKEN and never the token", async () => {
    for (const url of [
      "https://x-access-token:ghp_inurl@git.example.com/acme/m.git",
      "https://ghp_inurl@git.example.com/acme/m.git",
      "ssh://git:ghp_inurl@git.example.com/acme/m.git",
    ]) {
      const error = await createGitCredentials({ PATH: process.env.PATH }, url).then(
        () => undefined,
        (e: unknown) => e as PlumbError,
      );
      expect(error?.code, url).toBe("invalid-setting");
      expect(error?.message).toContain("PLUMB_GIT_TOKEN");
      expect(error?.message).not.toContain("ghp_inurl");
    }
    // ssh keeps its user name
    await createGitCredentials({ PATH: process.env.PATH }, "ssh://git@git.example.com/acme/m.git");
  });

  it("the controller refuses a --repo with a token in it before running git, and never shows the token", async () => {
    const log = memoryLogger();
    const source = {
      kind: "git" as const,
      url: "https://x-access-token:ghp_inrepo@127.0.0.1:9/acme/m.git",
      branch: "main",
      workDir: join(home, "checkout"),
      intervalMs: 60_000,
    };
    const error = await openManifestSource(source, { PATH: process.env.PATH }, log.logger).then(
      () => undefined,
      (e: unknown) => e as PlumbError,
    );
    expect(error?.code).toBe("invalid-setting");
    expect(error?.message).toContain("give the token in PLUMB_GIT_TOKEN");
    expect(`${error?.message} ${log.text()}`).not.toContain("ghp_inrepo");
    await expect(access(join(home, "checkout"))).rejects.toThrow(); // nothing cloned
  });
});
