import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyCommand, type ApplyIo } from "../../src/cli/sync/apply.js";
import { api, waitFor } from "../controller/support.js";
import { type GitHttpServer, startGitHttpServer } from "../controller/git-http-server.js";
import { plain, STAGING_KEY, startTwoPlanes } from "../cli/two-planes.js";

// A request in flight when the status branch's lease lapses. The holder's renewals hang (the git
// remote reads each push and says nothing) while the control plane holds its PATCH: the apply kept
// waiting for that PATCH until the client's own timeout (30 s), far past the lease (9 s here), since
// its `lost` signal fired only when the hanging renewal gave up (a minute). Just before its lease
// runs out the holder now acts as a write would (src/lock/fence.ts watchDeadline): the lease is
// lost, and the apply abandons the request before a waiter may take over. What the server already holds it may
// still apply (docs/status.md "A request in flight"): the PATCH forwarded after lands, counted.

const exec = promisify(execFile);
const LEASE_MS = 9_000;
let planes: Awaited<ReturnType<typeof startTwoPlanes>>;
let root: string;
let repo: string;
let backend: GitHttpServer;
let gitFront: Server;
let planeFront: Server;
const gitState = { stall: false };
/** The PATCH the control plane's front holds: when it came, when its client gave it up. */
const held: { res?: ServerResponse; req?: IncomingMessage; body?: Buffer; at?: number; closedAt?: number } =
  {};

const forward = (to: string, req: IncomingMessage, res: ServerResponse, body: Buffer) => {
  const url = new URL(to);
  const out = request(
    { host: url.hostname, port: url.port, path: req.url, method: req.method, headers: req.headers },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  out.on("error", () => res.destroy());
  out.end(body);
};

const bodyOf = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

const listen = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

beforeAll(async () => {
  planes = await startTwoPlanes();
  root = await mkdtemp(join(tmpdir(), "plumb-lease-in-flight-"));
  const served = join(root, "served");
  await exec("git", ["init", "-q", "--bare", "--initial-branch=main", join(served, "origin.git")]);
  repo = join(root, "repo");
  await exec("git", ["init", "-q", "--initial-branch=main", repo]);
  await writeFile(join(repo, "a.yaml"), plain("a"));
  await writeFile(join(repo, ".gitignore"), ".plumb/\n");
  const git = (...args: string[]) =>
    exec("git", ["-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", ...args]);
  await git("add", ".");
  await git("commit", "-qm", "a");
  await git("push", "-q", join(served, "origin.git"), "main");
  backend = await startGitHttpServer(served, "bot", "tok");
  const to = new URL(backend.url);
  const auth = `Basic ${Buffer.from("bot:tok").toString("base64")}`;
  gitFront = createServer((req, res) => {
    if (gitState.stall) return; // read, never answered
    const out = request(
      {
        host: to.hostname,
        port: to.port,
        path: req.url,
        method: req.method,
        headers: { ...req.headers, authorization: auth },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(out);
  });
  await git("remote", "add", "origin", `${await listen(gitFront)}/origin.git`);
  planeFront = createServer((req, res) => {
    void bodyOf(req).then((body) => {
      if (req.method !== "PATCH" || held.res) return forward(planes.staging.url, req, res, body);
      Object.assign(held, { req, res, body, at: performance.now() });
      res.on("close", () => (held.closedAt = performance.now()));
    });
  });
  await listen(planeFront);
}, 60_000);

afterAll(async () => {
  gitFront?.closeAllConnections();
  gitFront?.close();
  planeFront?.closeAllConnections();
  planeFront?.close();
  await backend?.close();
  await planes?.staging.stop();
  await planes?.prod.stop();
  await rm(root, { recursive: true, force: true });
});

const revisions = async () => {
  const client = api(planes.staging.url, STAGING_KEY);
  return (await client.revisions((await client.deployment("a")).id)).length;
};

async function apply(url: string): Promise<{ code: unknown; err: string }> {
  let err = "";
  const io: ApplyIo = {
    stdout: { write: () => true },
    stderr: { write: (t: string) => ((err += t), true) },
    stdin: { isTTY: false },
    signals: { once: () => process, removeListener: () => process },
    env: { PLUMB_API_URL: url, PLUMB_API_KEY: STAGING_KEY, NO_COLOR: "1" },
    lock: { leaseMs: LEASE_MS },
  };
  process.exitCode = 0;
  try {
    await applyCommand(io).parseAsync([repo, "--yes", "--no-wait", "--status-branch", "plumb-status"], {
      from: "user",
    });
    return { code: process.exitCode, err };
  } catch (error) {
    return { code: (error as { code?: unknown }).code, err };
  } finally {
    process.exitCode = 0;
  }
}

describe.runIf(process.platform === "linux")("a PATCH in flight when the lease lapses", () => {
  it("is abandoned by the holder before the lease runs out; what the server holds still lands", async () => {
    expect((await apply(planes.staging.url)).code).toBe(0);
    expect(await revisions()).toBe(1);
    const file = join(repo, "a.yaml");
    await writeFile(file, (await readFile(file, "utf8")).replace("img/a:1", "img/a:2"));
    const planeUrl = `http://127.0.0.1:${(planeFront.address() as AddressInfo).port}`;
    const running = apply(planeUrl);
    await waitFor("the PATCH held", () => held.at !== undefined, 30_000);
    gitState.stall = true; // from now on every renewal hangs
    const stalledAt = performance.now();
    await waitFor("the PATCH given up by its client", () => held.closedAt !== undefined, 40_000);
    // The last renewal that landed began before the stall: the lease ends less than LEASE_MS after
    // it (a loaded machine's timers may be late: 2 s more). Without the watch the client waited 30 s.
    expect(held.closedAt! - stalledAt).toBeLessThan(LEASE_MS + 2_000);
    gitFront.closeAllConnections(); // the hanging renewal ends: the apply releases and returns
    gitState.stall = false;
    const done = await running;
    expect(done.code).toBe("lock-lost");
    expect(await revisions()).toBe(1); // the client gave it up; the server has not applied it yet
    // Not guaranteed: a request the server already has is applied whenever it gets to it.
    forward(planes.staging.url, held.req!, held.res!, held.body!);
    await waitFor("the held PATCH applied", async () => (await revisions()) === 2, 20_000);
  }, 120_000);
});
