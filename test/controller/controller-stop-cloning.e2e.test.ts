import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { assertBuilt, type CliRun, spawnCli } from "../support/built-cli.js";
import { type GitHttpServer, startGitHttpServer } from "./git-http-server.js";
import { startReceiver } from "./notify-receiver.js";
import { waitFor } from "./support.js";
import { processesNaming } from "../support/processes.js";

// The built controller, told to stop (SIGTERM) while its first clone waits on a git server that
// never answers, exits within seconds with its usual code (0), and leaves no git process behind.
// The clone's abort killed `git clone` only: the HTTP helper it had started (git-remote-http) kept
// the clone's output pipes open, so the controller logged "stopped while on standby" at once and
// exited a minute later, when the helper gave up (the stall limit), well past a pod's grace.
// A poll's fetch that hangs when the controller is told to stop is ended the same way: its helper
// kept the process past 15 s too.

let work: string;
let cp: RunningControlPlane;
let silent: Server;
let run: CliRun | undefined;
let gitServer: GitHttpServer | undefined;
const stops: Array<() => Promise<void>> = [];
beforeEach(async () => {
  assertBuilt();
  work = await mkdtemp(join(tmpdir(), "plumb-stop-cloning-"));
  cp = await startControlPlane({ revisionSeconds: 0 });
});
afterEach(async () => {
  run?.child.kill("SIGKILL");
  silent?.closeAllConnections();
  silent?.close();
  await gitServer?.close();
  for (const stop of stops.splice(0)) await stop();
  await cp.stop();
  await rm(work, { recursive: true, force: true });
});

it.runIf(process.platform === "linux")(
  "SIGTERM during a clone that hangs: exits 0 within seconds, no git process left",
  async () => {
    let asked = 0;
    silent = createServer(() => asked++); // reads each request, never answers
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const marker = `stalled-${randomUUID()}`;
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/${marker}/manifests.git`;
    run = spawnCli(
      ["controller", "--repo", url, "--workdir", join(work, "checkout"), "--listen", "127.0.0.1:0"],
      { PLUMB_API_URL: cp.url, PLUMB_API_KEY: DEFAULT_API_KEY, HOME: work },
    );
    // The clone is under way: git's helper has asked the server, which says nothing.
    await waitFor("the clone's first request", () => asked > 0);
    expect(processesNaming(marker).length).toBeGreaterThan(0);

    const stoppedAt = Date.now();
    run.child.kill("SIGTERM");
    const ended = await Promise.race([
      run.exited,
      new Promise<string>((resolve) => setTimeout(() => resolve("still running after 15 s"), 15_000)),
    ]);
    const took = Date.now() - stoppedAt;
    const left = processesNaming(marker);
    for (const pid of left) process.kill(pid, "SIGKILL"); // (without the fix: the helper)
    expect(ended, run.output()).toBe(0);
    // Ended at once (its git is killed at the stop, no AFTER_STOP_MS), not hung (the 15 s above):
    // about a second quiet, a few seconds loaded, so 10 s, not 5.
    expect(took, run.output()).toBeLessThan(10_000);
    expect(left).toEqual([]);
    expect(run.output()).toContain("stopped while on standby");
  },
  30_000,
);

/** Waits at most 15 s for the controller's exit after SIGTERM: its code (or why not), the time, what git left. */
async function stopAndWatch(child: CliRun, marker: string) {
  const stoppedAt = Date.now();
  child.child.kill("SIGTERM");
  const ended = await Promise.race([
    child.exited,
    new Promise<string>((resolve) => setTimeout(() => resolve("still running after 15 s"), 15_000)),
  ]);
  const took = Date.now() - stoppedAt;
  const left = processesNaming(marker);
  for (const pid of left) process.kill(pid, "SIGKILL");
  return { ended, took, left };
}

const STAGING = `apiVersion: plumb/v1
kind: Environment
metadata: {name: staging}
spec: {api_url: {env: STAGING_API_URL}, api_key: {env: STAGING_API_KEY}, mode: saas}
`;

/** A repository served by git http-backend, behind a front that stops answering requests once `stall` says so. */
async function servedBehindFront(environments = false) {
  const repo = join(work, "manifests");
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: work });
  git("init", "-q", "--initial-branch=main", repo);
  await writeFile(
    join(repo, "a.yaml"),
    "apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: alpha}\nspec:\n  source: internal_container\n  source_revision_config: {image_uri: img/alpha:1}\n",
  );
  if (environments) await writeFile(join(repo, "environments.yaml"), STAGING);
  git("-C", repo, "add", "-A");
  git("-C", repo, "commit", "-qm", "alpha");
  const marker = `poll-${randomUUID()}`; // in the URL: names the git processes of this clone
  git("clone", "-q", "--bare", repo, join(work, "served", marker, "manifests.git"));
  gitServer = await startGitHttpServer(join(work, "served"), "bot", "tok");
  const backend = new URL(gitServer.url);
  const front = { port: 0, stalled: 0, stall: (_url: string) => false, onStall: () => {} };
  silent = createServer((req, res) => {
    if (front.stall(req.url ?? "")) {
      if (front.stalled++ === 0) front.onStall();
      return; // reads the request, never answers
    }
    const forward = request(
      { host: backend.hostname, port: backend.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  front.port = (silent.address() as AddressInfo).port;
  return { marker, front };
}

it.runIf(process.platform === "linux").each([
  ["a controller", false],
  ["a controller of environments", true],
])(
  "SIGTERM during a poll's fetch that hangs (%s): exits 0 within seconds, no git process left",
  async (_name, environments) => {
    const { marker, front } = await servedBehindFront(environments);
    const port = front.port;
    run = spawnCli(
      [
        "controller",
        ...["--repo", `http://127.0.0.1:${port}/${marker}/manifests.git`],
        ...["--workdir", join(work, "checkout"), "--listen", "127.0.0.1:0", "--interval", "1s"],
      ],
      {
        PLUMB_API_URL: cp.url,
        PLUMB_API_KEY: DEFAULT_API_KEY,
        PLUMB_GIT_USERNAME: "bot",
        PLUMB_GIT_TOKEN: "tok",
        STAGING_API_URL: cp.url,
        STAGING_API_KEY: DEFAULT_API_KEY,
        HOME: work,
      },
    );
    const child = run;
    await waitFor("the checkout", () => child.output().includes('"msg":"checked out"')).catch(
      (error: Error) => {
        throw new Error(`${error.message}: ${child.output()}`);
      },
    );
    front.stall = () => true;
    await waitFor("a poll's fetch, stalled", () => front.stalled > 0);
    const { ended, took, left } = await stopAndWatch(child, marker);
    expect(ended, child.output()).toBe(0);
    expect(took, child.output()).toBeLessThan(10_000); // at once, not hung (as above)
    expect(left).toEqual([]);
    expect(child.output()).not.toContain("git fetch failed"); // a fetch stopped is no failure
    if (environments) expect(child.output()).toContain('"environment":"staging"');
  },
  40_000,
);

// The status branch's pushes and the lease's ran with simple-git, which ended git on no stop: at
// SIGTERM a push waiting on a remote that says nothing kept the controller up to the stall limit
// (60 s), and so did the last status publish and the lease's release after it, each its own minute.
it.runIf(process.platform === "linux")(
  "SIGTERM during a status-branch push that hangs: exits 0 within seconds, no git process left",
  async () => {
    const { marker, front } = await servedBehindFront();
    const receiver = await startReceiver();
    stops.push(() => receiver.close());
    run = spawnCli(
      [
        "controller",
        ...["--repo", `http://127.0.0.1:${front.port}/${marker}/manifests.git`],
        ...["--workdir", join(work, "checkout"), "--listen", "127.0.0.1:0", "--interval", "1h"],
        // A renewal of the lease (a push) every 1.5 s; the renew deadline is 3 s after the last.
        ...["--status-branch", "plumb-status", "--lock-lease", "4500ms"],
        ...["--notify", receiver.url],
      ],
      {
        PLUMB_API_URL: cp.url,
        PLUMB_API_KEY: DEFAULT_API_KEY,
        PLUMB_GIT_USERNAME: "bot",
        PLUMB_GIT_TOKEN: "tok",
        HOME: work,
      },
    );
    const child = run;
    await waitFor("the controller's first reconcile", () =>
      child.output().includes("first reconcile finished"),
    ).catch((error: Error) => {
      throw new Error(`${error.message}: ${child.output()}`);
    });
    // The first reconcile's status publish landed: from now on only the lease's renewals push.
    const served = join(work, "served", marker, "manifests.git");
    await waitFor("the first status publish", () =>
      execFileSync("git", ["--git-dir", served, "log", "--format=%s", "plumb-status", "--"], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      }).includes("plumb controller: status"),
    );
    // Pushes (git-receive-pack) get no answer from now on; fetches and ls-remote still do. The
    // stop is sent as the first push stalls (a renewal, 1.5 s before its renew deadline): sent
    // later, after the deadline, the lease lapsed while leading, and the controller rightly says
    // it lost the lock. (With a 3 s lease and the stop sent on a poll, a loaded CI crossed it.)
    const stalled = new Promise<void>((resolve) => (front.onStall = resolve));
    front.stall = (url) => url.includes("git-receive-pack");
    await stalled;
    const { ended, took, left } = await stopAndWatch(child, marker);
    expect(ended, child.output()).toBe(0);
    // The push in flight gets 3 s more (AFTER_STOP_MS); then the last publish and the lease's
    // release are not tried against a remote that did not answer.
    expect(took, child.output()).toBeLessThan(8_000);
    expect(left).toEqual([]);
    // The renewal in flight ran out 3 s after the stop, past the renew deadline: the lease lapsed
    // only because the remote said nothing. It stopped as asked; no lock was lost while leading.
    expect(child.output()).toContain(
      "stopped as asked; the git remote did not answer within 3 s of the stop",
    );
    expect(child.output(), child.output()).not.toContain("losing the state lock");
    expect(child.output(), child.output()).not.toContain('"msg":"lost the state lock: stopping"');
    // Nor does the notifier say so, nor the last publish quote the lapse as an error: the status
    // not published is a warning that says where the last status is.
    expect(
      receiver.events().map((e) => e["event"]),
      child.output(),
    ).not.toContain("lock-lost");
    expect(child.output()).not.toContain("another writer may hold it now");
    expect(child.output()).not.toContain('"level":50');
    expect(child.output()).toContain("the last status is in the status directory");
  },
  40_000,
);
