import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { useGitControllerHarness } from "./harness.js";
import { gitIn } from "../support/git-clones.js";
import { type HoldingProxy, startHoldingProxy } from "../support/holding-proxy.js";
import { api, container, memoryLogger, waitFor, writeDoc } from "./support.js";

// A controller following a branch keeps its records in the checkout (`--path/.plumb/status/`) and
// publishes them to --status-branch. A pulled commit can add a file at the path of one of those
// records: the checkout's reset writes the committed file over the controller's own. The committed
// file is not the controller's record (tracked-records.ts), and the controller's record must not be
// lost for it: not from the status branch, not from the controller's next start, and without a
// status branch not from its next start either (kept in the checkout's git directory meanwhile).

const run = promisify(execFile);
const h = useGitControllerHarness("plumb-ctl-committed-");

/** The harness's source, polled every 250 ms, not 50 (each poll a fetch: git processes); no assertion counts polls. */
const source = () => ({
  kind: "git" as const,
  url: h.bare,
  branch: "main",
  path: "deploy",
  workDir: join(h.tmp, "checkout"),
  intervalMs: 250,
});

const start = (log: ReturnType<typeof memoryLogger>) =>
  h.start({
    source: source(),
    statusBranch: "plumb-status",
    env: { PATH: process.env.PATH, HOME: h.tmp },
    logger: log.logger,
  });

const RECORD = "deploy/.plumb/status/deployment.alpha.json";
const onBranch = async (): Promise<Record<string, unknown> | undefined> => {
  const shown = await run("git", ["--git-dir", h.bare, "show", `plumb-status:${RECORD}`]).catch(
    () => undefined,
  );
  return shown ? (JSON.parse(shown.stdout) as Record<string, unknown>) : undefined;
};

it("a pulled commit that adds a file at the path of the controller's own record: the record stays on the status branch, the file is not trusted", async () => {
  const { cp, tmp, work } = h;
  const client = api(cp.url);
  const first = memoryLogger();
  h.controller = await start(first);
  await waitFor("ready", () => h.controller!.ready());
  const own = join(tmp, "checkout", RECORD);
  const mine = JSON.parse(await readFile(own, "utf8")) as Record<string, unknown>;

  // The commit: a file where alpha's record is (saying alpha is of another deployment), and a change
  // to alpha, so the controller writes alpha's record again after the reset.
  const forged = { ...mine, id: "00000000-0000-0000-0000-000000000000" };
  await writeDoc(join(work, "deploy", ".plumb", "status"), "deployment.alpha.json", JSON.stringify(forged));
  await writeDoc(join(work, "deploy"), "a.yaml", container("alpha", "img/alpha:2"));
  await gitIn(work, "add", "-A");
  await gitIn(work, "commit", "-qm", "alpha 2, and a file at alpha's record");
  await gitIn(work, "push", "-q", "origin", "main");
  const commit = (await gitIn(work, "rev-parse", "HEAD")).stdout.trim();
  const image = async () => (await client.deployment("alpha")).source_revision_config?.image_uri;
  await waitFor("the commit applied", async () => (await image()) === "img/alpha:2");
  await waitFor("alpha's record of the commit", () =>
    h.controller!.status().objects.some((o) => o.name === "alpha" && o.git_commit === commit),
  );
  await h.controller.stop(1_000); // publishes the status branch
  h.controller = undefined;

  const published = await onBranch();
  expect(published?.id).toBe(mine.id);
  expect(published?.git_commit).toBe(commit);
  expect(first.text()).toContain("deployment.alpha.json");
  expect(first.text()).toContain("tracked by git");

  // The next start, on the same checkout, knows alpha from the controller's own record.
  const second = memoryLogger();
  h.controller = await start(second);
  const atStart = h.controller.status().objects.find((o) => o.name === "alpha");
  expect(atStart?.id).toBe(mine.id);
  expect(atStart?.git_commit).toBe(commit);
  await waitFor("ready again", () => h.controller!.ready());

  // A commit that takes the file away again (the reset deletes it from the checkout), and adds beta:
  // alpha's record is written back, and stays on the branch.
  await gitIn(work, "rm", "-q", "deploy/.plumb/status/deployment.alpha.json");
  await writeDoc(join(work, "deploy"), "b.yaml", container("beta", "img/beta:1"));
  await gitIn(work, "add", "-A");
  await gitIn(work, "commit", "-qm", "beta, and the file gone");
  await gitIn(work, "push", "-q", "origin", "main");
  await waitFor("beta's record", () => h.controller!.status().objects.some((o) => o.name === "beta"));
  await h.controller.stop(1_000);
  h.controller = undefined;
  expect((JSON.parse(await readFile(own, "utf8")) as Record<string, unknown>).id).toBe(mine.id);
  expect((await onBranch())?.id).toBe(mine.id);
}, 60_000);

// Without --status-branch: the controller's record of alpha, while a commit's file holds its path,
// is kept in the checkout's git directory (docs/status.md), so a restart then still knows alpha.

let proxy: HoldingProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

const DISPLACED = ".git/plumb/displaced-status/deploy/.plumb/status";
const secrets = [{ name: "API_TOKEN", valueFrom: { env: "API_TOKEN" } }];
const withSecret = (image: string) => container("alpha", image, { secrets });
const startPlain = (log: ReturnType<typeof memoryLogger>) =>
  h.start({
    source: source(),
    api: { apiUrl: proxy!.url, apiKey: DEFAULT_API_KEY, platformUrl: proxy!.url },
    env: { PATH: process.env.PATH, HOME: h.tmp, API_TOKEN: "token-1" },
    logger: log.logger,
  });
const writesTo = (id: string, since: number) =>
  proxy!.requests.slice(since).filter((r) => r.method !== "GET" && r.url.includes(id));
const checkoutRecord = async () =>
  JSON.parse(await readFile(join(h.tmp, "checkout", RECORD), "utf8")) as Record<string, unknown>;

/** Alpha (with a secret) applied by a controller without a status branch; its record as written. */
async function applyAlphaWithSecret() {
  await writeDoc(join(h.work, "deploy"), "a.yaml", withSecret("img/alpha:1"));
  await h.push("alpha with a secret");
  proxy = await startHoldingProxy(h.cp.url);
  h.controller = await startPlain(memoryLogger());
  await waitFor("ready", () => h.controller!.ready());
  const mine = await checkoutRecord();
  expect(mine.secret_fingerprints).toBeTruthy();
  return mine;
}

/** Pushes a file at alpha's record path (alpha said to be another deployment), with `more` changes. */
async function pushForged(mine: Record<string, unknown>, message: string, more = async () => {}) {
  const forged = { ...mine, id: "00000000-0000-0000-0000-000000000000", secret_fingerprints: null };
  await writeDoc(join(h.work, "deploy", ".plumb", "status"), "deployment.alpha.json", JSON.stringify(forged));
  await more();
  await h.push(message);
  return (await gitIn(h.work, "rev-parse", "HEAD")).stdout.trim();
}

/** The commit checked out, and the controller past it (the file said as tracked). */
const pastCommit = (log: ReturnType<typeof memoryLogger>) =>
  waitFor("the file at alpha's record said tracked", () =>
    log
      .lines()
      .some((l) => String(l.file).endsWith("deployment.alpha.json") && l.msg === "ignoring status file"),
  );

/** Takes the file away again: alpha's record is back in the store, nothing left displaced. */
async function removeForged() {
  await gitIn(h.work, "rm", "-q", RECORD);
  await writeDoc(join(h.work, "deploy"), "b.yaml", container("beta", "img/beta:1"));
  await h.push("beta, and the file gone");
  await waitFor("beta's record", () => h.controller!.status().objects.some((o) => o.name === "beta"));
}

it("without --status-branch, a restart while a commit's file holds alpha's record path sends alpha's secret no more", async () => {
  const mine = await applyAlphaWithSecret();
  const client = api(h.cp.url);
  const id = String(mine.id);
  const revisions = (await client.revisions(id)).length;
  const log = memoryLogger();
  await h.controller!.stop(1_000);
  h.controller = await startPlain(log);
  await waitFor("ready", () => h.controller!.ready());
  await pushForged(mine, "a file at alpha's record");
  await pastCommit(log);
  await h.controller.stop(1_000);

  // The restart, the file still tracked: alpha is known (its id, its secret's fingerprint), nothing sent.
  const since = proxy!.requests.length;
  const second = memoryLogger();
  h.controller = await startPlain(second);
  const atStart = h.controller.status().objects.find((o) => o.name === "alpha");
  await waitFor("ready again", () => h.controller!.ready());
  expect(writesTo(id, since)).toEqual([]);
  expect((await client.revisions(id)).length).toBe(revisions);
  expect(atStart?.id).toBe(id);
  expect((await checkoutRecord()).id).toBe("00000000-0000-0000-0000-000000000000"); // the commit's, untouched
  expect(second.text()).toContain("tracked by git");

  await removeForged();
  await h.controller.stop(1_000);
  h.controller = undefined;
  const back = await checkoutRecord();
  expect(back.id).toBe(id);
  expect(back.secret_fingerprints).toEqual(mine.secret_fingerprints);
  expect(await readdir(join(h.tmp, "checkout", DISPLACED)).catch(() => [])).toEqual([]);
  expect(writesTo(id, since)).toEqual([]);
}, 60_000);

it("without --status-branch, a write-ahead intent recorded while a commit's file holds alpha's record path survives a restart: the change is not sent twice", async () => {
  const mine = await applyAlphaWithSecret();
  const client = api(h.cp.url);
  const id = String(mine.id);
  await h.controller!.stop(1_000);
  const first = memoryLogger();
  h.controller = await startPlain(first);
  await waitFor("ready", () => h.controller!.ready());

  // The commit brings the file and a change to alpha; its PATCH is held in flight, the controller
  // stopped meanwhile (its reconcile ended after the grace), and the PATCH then lands: a crash
  // after the send, with only the intent recorded.
  const held = proxy!.hold((m, u) => m === "PATCH" && u.includes(id));
  const commit = await pushForged(mine, "alpha 2, and a file at alpha's record", () =>
    writeDoc(join(h.work, "deploy"), "a.yaml", withSecret("img/alpha:2")),
  );
  const patch = await held;
  await h.controller.stop(200);
  h.controller = undefined;
  const displaced = join(h.tmp, "checkout", DISPLACED, "deployment.alpha.json");
  // (the intent, kept in the checkout's git directory: docs/status.md)
  const kept = await readFile(displaced, "utf8").catch(() => "{}");
  await patch.forward();
  const image = async () => (await client.deployment("alpha")).source_revision_config?.image_uri;
  expect(await image()).toBe("img/alpha:2");
  const revisions = (await client.revisions(id)).length;

  const since = proxy!.requests.length;
  h.controller = await startPlain(memoryLogger());
  await waitFor("ready again", () => h.controller!.ready());
  expect(writesTo(id, since)).toEqual([]);
  expect((await client.revisions(id)).length).toBe(revisions);
  expect((JSON.parse(kept) as { pending?: { git_commit?: string } }).pending?.git_commit).toBe(commit);

  await removeForged();
  await h.controller.stop(1_000);
  h.controller = undefined;
  const back = await checkoutRecord();
  expect(back.id).toBe(id);
  expect(back.pending).toBeUndefined();
  expect(back.git_commit).toBe(commit);
  expect(writesTo(id, since)).toEqual([]);
}, 60_000);
