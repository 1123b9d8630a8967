import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGitCredentials } from "../../src/git/git-credentials.js";
import { openGitSource, redactUrl } from "../../src/git/git-source.js";
import { redactUrlsIn } from "../../src/git/git-origin.js";
import { loadStatusFromBranch } from "../../src/git/records/load-status-branch.js";
import { runNetworkGit } from "../../src/git/stoppable-git.js";
import { type Controller, startController } from "../../src/controller/controller.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { startControlPlane } from "../../src/control-plane/server.js";
import { startGitHttpServer } from "../controller/git-http-server.js";
import { container, memoryLogger, waitFor, writeDoc } from "../controller/support.js";
import { manifestRemote } from "../support/git-clones.js";

// A git remote's credentials are never shown: not in the URL plumb names (errors, logs, the status
// page, /status), not where git quotes it, not where the server echoes them. The server is a hostile
// HTTP git remote on loopback; the client is the real git, run as the controller runs it.

const QUERY_TOKEN = "qtok-7f3a9c2e1b8d4f60";
const PATH_TOKEN = "ghp_PathToken0123456789abcdefABCDEF";
const ENV_TOKEN = "envtok-5d2c8b1a9e7f3064";
/**
 * A remote with a token git would send in its URL is refused (git-argv.e2e.test.ts); one that only
 * may be a token (a query parameter `t`, a segment after `auth`) is taken and hidden wherever shown.
 */
const SECRET = "ptok-0c4e8a2f6b1d9e37";
const maybeTokens = (base: string) => `${base}/auth/${SECRET}/repo.git?t=${QUERY_TOKEN}`;

describe("redactUrl", () => {
  it.each([
    [
      "https://git.example/acme/deploy.git?access_token=QTOKEN123",
      "https://git.example/acme/deploy.git?access_token=****",
    ],
    [
      "https://git.example/x-access-token/PTOKEN123/acme/deploy.git",
      "https://git.example/x-access-token/****/acme/deploy.git",
    ],
    [
      "https://proxy.example/ghtok123@github.com/acme/deploy.git",
      "https://proxy.example/****@github.com/acme/deploy.git",
    ],
    ["https://git.example/oauth2:PTOKEN123/deploy.git", "https://git.example/oauth2:****/deploy.git"],
    ["https://git.example/deploy.git#FRAGTOKEN", "https://git.example/deploy.git#****"],
    ["https://user:PASSWORD1@git.example/deploy.git", "https://****@git.example/deploy.git"],
    [`https://git.example/${PATH_TOKEN}/deploy.git`, "https://git.example/****/deploy.git"],
    ["git@github.com:acme/deploy.git", "git@github.com:acme/deploy.git"],
    ["ssh://deploy@git.example/acme/deploy.git", "ssh://deploy@git.example/acme/deploy.git"],
    [
      "https://git.example/acme/global-settings-for-every-service.git",
      "https://git.example/acme/global-settings-for-every-service.git",
    ],
    ["https://git.example/glpat-0123456789abcdefXYZ/deploy.git", "https://git.example/****/deploy.git"],
    [
      "https://ghp_0123456789abcdefABCD@github.com/acme/deploy.git",
      "https://****@github.com/acme/deploy.git",
    ],
    ["https://github.com/acme/deploy.git", "https://github.com/acme/deploy.git"],
  ])("%s is shown as %s", (url, shown) => {
    expect(redactUrl(url)).toBe(shown);
  });

  it("a token of a known shape is hidden in git's text wherever it starts, even after a letter or digit", () => {
    for (const text of [`remote: bad %40${PATH_TOKEN}`, `remote: token=x${PATH_TOKEN}`])
      expect(redactUrlsIn(text)).not.toContain(PATH_TOKEN);
  });

  it("a URL refused for its user:password names no other credential of it either", async () => {
    const url = `https://user:pw-secret-1@git.example/x-access-token/${PATH_TOKEN}/deploy.git?t=${QUERY_TOKEN}`;
    const error = await createGitCredentials({}, url).catch((e: Error) => e);
    expect(error).toMatchObject({ code: "invalid-setting" });
    for (const secret of ["pw-secret-1", PATH_TOKEN, QUERY_TOKEN])
      expect((error as Error).message).not.toContain(secret);
  });
});

type Hostile = { url: string; server: Server; seen: string[] };

const pkt = (line: string) => (line.length + 4).toString(16).padStart(4, "0") + line;

/** A remote that refuses every repository: 404, 500 quoting the request, or an ERR echoing the Authorization it got. */
async function hostile(): Promise<Hostile> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    const url = req.url ?? "/";
    seen.push(url);
    if (url.startsWith("/echo/")) {
      if (!req.headers.authorization)
        return res.writeHead(401, { "www-authenticate": 'Basic realm="git"' }).end();
      const auth = req.headers.authorization;
      const decoded = Buffer.from(auth.split(" ")[1] ?? "", "base64").toString();
      res.writeHead(200, { "content-type": "application/x-git-upload-pack-advertisement" });
      return res.end(
        `${pkt("# service=git-upload-pack\n")}0000${pkt(`ERR refused ${auth} (${decoded}) token ${decoded.split(":")[1]?.toUpperCase()}\n`)}`,
      );
    }
    if (url.startsWith("/500/")) return res.writeHead(500).end(`no such thing: ${url}`);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, seen };
}

let tmp: string;
let remote: Hostile;
beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), "plumb-probe-git-"));
  remote = await hostile();
});
afterEach(async () => {
  await new Promise((resolve) => remote.server.close(resolve));
  await rm(tmp, { recursive: true, force: true });
});

const cloneError = async (url: string, env: NodeJS.ProcessEnv = {}) => {
  const opened = openGitSource({
    url,
    branch: "main",
    workDir: join(tmp, "checkout"),
    env: { PATH: process.env.PATH, HOME: tmp, ...env },
  });
  const error = (await opened.then(
    () => undefined,
    (e: unknown) => e,
  )) as { code: string; message: string };
  expect(error.code).toBe("git-failed");
  return error.message;
};

describe("a git remote's credentials in git's failures", () => {
  it("git quoting a remote with a token in its query and its path shows neither", async () => {
    for (const kind of ["404", "500"]) {
      const message = await cloneError(maybeTokens(`${remote.url}/${kind}`));
      expect(remote.seen.some((u) => u.includes(QUERY_TOKEN))).toBe(true); // git did send it
      expect(message).toContain(kind === "404" ? "not found" : "500");
      expect(message).not.toContain(QUERY_TOKEN);
      expect(message).not.toContain(SECRET);
    }
  });

  it("a server whose error echoes PLUMB_GIT_TOKEN (as sent, in base64, upper-cased) has none of it shown", async () => {
    const message = await cloneError(`${remote.url}/echo/repo.git`, { PLUMB_GIT_TOKEN: ENV_TOKEN });
    const basic = Buffer.from(`x-access-token:${ENV_TOKEN}`).toString("base64");
    expect(message).toContain("refused"); // the server's words are still shown
    for (const form of [ENV_TOKEN, ENV_TOKEN.toUpperCase(), basic]) expect(message).not.toContain(form);
  });
});

describe("a status branch remote's credentials in git's failures", () => {
  /** A repository whose origin is `remote` (and its local config `extra`), read as a status branch. */
  const readError = async (remote: string, extra: string[][] = []) => {
    const dir = join(tmp, "repo");
    execFileSync("git", ["init", "-q", dir]);
    execFileSync("git", ["-C", dir, "remote", "add", "origin", remote]);
    for (const [key, value] of extra) execFileSync("git", ["-C", dir, "config", key!, value!]);
    const error = (await loadStatusFromBranch({ root: dir, branch: "plumb-status" }).then(
      () => undefined,
      (e: unknown) => e,
    )) as { code: string; message: string };
    expect(error.code).toBe("status-branch-read-failed");
    return error.message;
  };

  it("git quoting a remote with a token in its query and its path shows neither", async () => {
    const message = await readError(maybeTokens(`${remote.url}/404`));
    expect(message).toContain("not found");
    expect(message).not.toContain(QUERY_TOKEN);
    expect(message).not.toContain(SECRET);
  });

  it("a remote with a token git can only send in its URL is refused, naming neither", async () => {
    const dir = join(tmp, "repo");
    execFileSync("git", ["init", "-q", dir]);
    const url = `${remote.url}/x-access-token/${SECRET}/repo.git?access_token=${QUERY_TOKEN}`;
    execFileSync("git", ["-C", dir, "remote", "add", "origin", url]);
    const error = (await loadStatusFromBranch({ root: dir, branch: "plumb-status" }).catch(
      (e: unknown) => e,
    )) as { code: string; message: string };
    expect(error.code).toBe("invalid-setting");
    expect(error.message).toContain("PLUMB_GIT_TOKEN");
    for (const secret of [SECRET, QUERY_TOKEN]) expect(error.message).not.toContain(secret);
    expect(remote.seen).toEqual([]); // git never ran
  });

  it("a server echoing the repository's extraheader (actions/checkout's) has none of it shown", async () => {
    const basic = Buffer.from(`x-access-token:${ENV_TOKEN}`).toString("base64");
    const message = await readError(`${remote.url}/echo/repo.git`, [
      [`http.${remote.url}/.extraheader`, `AUTHORIZATION: basic ${basic}`],
    ]);
    expect(message).toContain("refused");
    for (const form of [ENV_TOKEN, ENV_TOKEN.toUpperCase(), basic]) expect(message).not.toContain(form);
  });
});

describe("any git command over the network (the drift branch's and promotion's pushes)", () => {
  it("fails without the remote's credentials or PLUMB_GIT_TOKEN in its message", async () => {
    const dir = join(tmp, "repo");
    execFileSync("git", ["init", "-q", dir]);
    const tokenUrl = `${remote.url}/500/x-access-token/${PATH_TOKEN}/repo.git?access_token=${QUERY_TOKEN}`;
    execFileSync("git", ["-C", dir, "remote", "add", "origin", tokenUrl]);
    const identity = ["-c", "user.name=t", "-c", "user.email=t@example.com"];
    execFileSync("git", ["-C", dir, ...identity, "commit", "-q", "--allow-empty", "-m", "c"]);
    const credentials = await createGitCredentials(
      { PATH: process.env.PATH, HOME: tmp, PLUMB_GIT_TOKEN: ENV_TOKEN },
      `${remote.url}/echo/repo.git`,
    );
    try {
      const failures = await Promise.all(
        [
          ["push", "--quiet", "origin", "HEAD:refs/heads/drift"], // the URL from the remote's config
          ["ls-remote", tokenUrl], // in argv
          ["ls-remote", `${remote.url}/echo/repo.git`], // the server echoes the Basic credentials
        ].map((args) =>
          runNetworkGit(args, { cwd: dir, env: credentials.env }).then(
            () => "",
            (e: Error) => e.message,
          ),
        ),
      );
      expect(failures[0]).toContain("x-access-token/****/repo.git?access_token=****");
      expect(failures[2]).toContain("refused");
      const basic = Buffer.from(`x-access-token:${ENV_TOKEN}`).toString("base64");
      for (const message of failures)
        for (const secret of [QUERY_TOKEN, PATH_TOKEN, ENV_TOKEN, ENV_TOKEN.toUpperCase(), basic])
          expect(message).not.toContain(secret);
    } finally {
      await credentials.dispose();
    }
  });
});

describe("the controller following a remote with what may be a token in its path", () => {
  it("names it redacted in its log, /status, the status page's header and /metrics", async () => {
    const { push } = await manifestRemote(tmp);
    await writeDoc(join(tmp, "work"), "a.yaml", container("alpha", "img/alpha:1"));
    await push("first");
    // The bare repository as the server serves it: under /auth/TOKEN/.
    await mkdir(join(tmp, "auth", SECRET), { recursive: true });
    await symlink(join(tmp, "manifests.git"), join(tmp, "auth", SECRET, "manifests.git"));
    const git = await startGitHttpServer(tmp, "x-access-token", ENV_TOKEN);
    const cp = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
    const log = memoryLogger();
    let controller: Controller | undefined;
    try {
      controller = await startController({
        source: {
          kind: "git",
          url: `${git.url}/auth/${SECRET}/manifests.git`,
          branch: "main",
          workDir: join(tmp, "checkout"),
          intervalMs: 3_600_000,
        },
        api: { apiUrl: cp.url, apiKey: DEFAULT_API_KEY, platformUrl: cp.url },
        listen: { host: "127.0.0.1", port: 0 },
        selfHeal: false,
        concurrency: 1,
        debounceMs: 10,
        backoffBaseMs: 50,
        backoffMaxMs: 200,
        timeoutMs: 10_000,
        env: { PATH: process.env.PATH, HOME: tmp, PLUMB_GIT_TOKEN: ENV_TOKEN },
        logger: log.logger,
      });
      await waitFor("ready", () => controller!.ready());
      const served = await Promise.all(
        ["/status", "/ui/api/header", "/metrics", "/"].map(async (path) =>
          (await fetch(`${controller!.url}${path}`)).text(),
        ),
      );
      expect(served[0]).toContain("/auth/****/manifests.git"); // the remote is named
      for (const text of [...served, log.text()]) {
        expect(text).not.toContain(SECRET);
        expect(text).not.toContain(ENV_TOKEN);
      }
    } finally {
      await controller?.stop(1_000);
      await cp.stop();
      await git.close();
    }
  });
});
