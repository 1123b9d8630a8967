import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openGitSource } from "../../src/git/git-source.js";
import { createGitCredentials } from "../../src/git/git-credentials.js";
import { statusGitEnv } from "../../src/git/git-env.js";

// PLUMB_GIT_TOKEN goes to the configured repository's origin only. Two servers on loopback: A (the
// configured --repo) answers 302 to B, B answers 401 and counts Authorization headers. A real git
// client runs with plumb's environment; B must never see the token.

const run = promisify(execFile);
const TOKEN = "ghp_canary-for-A-only-0123456789";

type Counting = { url: string; requests: number; authorizations: string[]; server: Server };

async function listen(handle: (c: Counting) => Parameters<typeof createServer>[1]): Promise<Counting> {
  const counting: Counting = { url: "", requests: 0, authorizations: [], server: undefined as never };
  counting.server = createServer((req, res) => {
    counting.requests++;
    if (req.headers.authorization) counting.authorizations.push(req.headers.authorization);
    handle(counting)!(req, res);
  });
  await new Promise<void>((resolve) => counting.server.listen(0, "127.0.0.1", resolve));
  counting.url = `http://127.0.0.1:${(counting.server.address() as AddressInfo).port}`;
  return counting;
}

const unauthorized = () => (_req: unknown, res: import("node:http").ServerResponse) =>
  res.writeHead(401, { "www-authenticate": 'Basic realm="git"' }).end();

let tmp: string;
let a: Counting;
let b: Counting;
/** What A does: redirect everything to B (default), or ask for credentials itself. */
let aMode: "redirect" | "unauthorized";

beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), "plumb-git-redirect-"));
  aMode = "redirect";
  b = await listen(unauthorized);
  a = await listen(() => (req, res) => {
    if (aMode === "unauthorized") return unauthorized()(req, res);
    res.writeHead(302, { location: `${b.url}${req.url ?? "/"}` }).end();
  });
});
afterEach(async () => {
  for (const s of [a, b]) await new Promise((resolve) => s.server.close(resolve));
  await rm(tmp, { recursive: true, force: true });
});

const basic = (token: string) => Buffer.from(`x-access-token:${token}`).toString("base64");
const env = () => ({ PATH: process.env.PATH, HOME: tmp, PLUMB_GIT_TOKEN: TOKEN });
const lsRemote = (gitEnv: Record<string, string>) =>
  run("git", ["ls-remote", `${a.url}/deployments.git`], { env: { ...gitEnv, GIT_CONFIG_NOSYSTEM: "1" } });

describe("git credentials and redirects", () => {
  it("controller checkout: A's redirect is not followed, B gets no request and no token", async () => {
    const source = openGitSource({
      url: `${a.url}/deployments.git`,
      branch: "main",
      workDir: join(tmp, "checkout"),
      env: env(),
    });
    await expect(source).rejects.toMatchObject({ code: "git-failed" });
    expect(a.requests).toBeGreaterThan(0);
    expect([b.requests, b.authorizations.length]).toEqual([0, 0]);
    expect((await source.catch((e: Error) => e.message)) as string).not.toContain(TOKEN);
  });

  it("even when git follows the redirect, the askpass answers B nothing", async () => {
    const creds = await createGitCredentials(env(), `${a.url}/deployments.git`);
    try {
      // Undo plumb's http.followRedirects=false: only the askpass's scope stands between B and the token.
      const following = { ...creds.env, GIT_CONFIG_VALUE_0: "true" };
      const failure = await lsRemote(following).then(
        () => "",
        (e: { stderr: string }) => e.stderr,
      );
      expect(failure).toContain(`only for ${a.url}, not ${b.url}`);
      expect(b.requests).toBeGreaterThan(0);
      expect(b.authorizations).toEqual([]);
      // Control: A asking itself gets the token (the askpass does answer its own origin).
      aMode = "unauthorized";
      await lsRemote(following).catch(() => undefined);
      expect(a.authorizations).toContain(`Basic ${basic(TOKEN)}`);
      expect(b.authorizations).toEqual([]);
    } finally {
      await creds.dispose();
    }
  });

  it("status branch (outside the controller): scoped to the remote's origin, no redirects", async () => {
    await run("git", ["init", "-q", tmp]);
    const git = await statusGitEnv({ top: tmp, source: `${a.url}/deployments.git` }, undefined, env());
    try {
      expect(git.env.PLUMB_GIT_ORIGIN).toBe(a.url);
      await expect(lsRemote(git.env)).rejects.toThrow();
      expect([b.requests, b.authorizations.length]).toEqual([0, 0]);
    } finally {
      await git.dispose();
    }
  });
});
