import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { type Controller, startController } from "../../src/controller/controller.js";
import { acquireStateLock } from "../../src/lock/index.js";
import { freePort } from "../support/free-port.js";
import { fastControllerOptions, useControllerHarness } from "./harness.js";
import { api, container, waitFor, writeDoc } from "./support.js";

// A controller on TREE and one on TREE/sub (or an apply of TREE/sub) each hold their own store and
// both reconcile what is under sub: every change there was sent by both. A controller now holds the
// locks of the stores nearby in use too, for its life, all in one order by path (as apply does): the
// later one stands by and sends nothing. Counted on the control plane: revisions of the deployment
// under sub. Its secret makes the double send certain: a controller whose store has no record of
// its fingerprints sends it again (one more revision) at its first reconcile.

const h = useControllerHarness("plumb-ctl-nearby-");
const others: Array<Promise<Controller>> = [];
afterEach(async () => {
  await h.controller?.stop(1_000); // a standby leads (and is stopped) only once the leader is gone
  h.controller = undefined;
  for (const other of others.splice(0)) await (await other.catch(() => null))?.stop(1_000);
});

const secrets = [{ name: "TOKEN", value: "t0ps3cret-value" }];
const revisions = async () => {
  const client = api(h.cp.url);
  return (await client.revisions((await client.deployment("alpha")).id)).length;
};
const role = async (url: string) => {
  const res = await fetch(`${url}/readyz`).catch(() => null);
  if (!res) return undefined;
  const body = (await res.json().catch(() => ({}))) as { role?: string };
  return res.status === 200 ? "leader" : body.role;
};

/** A git repository with `sub/a.yaml`: the stores above are looked for up to its root. */
async function tree(): Promise<{ top: string; sub: string }> {
  execFileSync("git", ["init", "-q", h.dir]);
  await writeDoc(join(h.dir, "sub"), "a.yaml", container("alpha", "img/alpha:1", { secrets }));
  return { top: h.dir, sub: join(h.dir, "sub") };
}

/** A second controller on `dir`, started in the background; its URL once it says leader or standby. */
async function second(
  dir: string,
  statusDir?: string,
): Promise<{ url: string; leading: Promise<Controller>; now: string }> {
  const port = await freePort();
  const leading = startController(
    fastControllerOptions(h.cp, {
      source: { kind: "dir", dir },
      listen: { host: "127.0.0.1", port },
      ...(statusDir ? { statusDir } : {}),
    }),
  );
  others.push(leading);
  const url = `http://127.0.0.1:${port}`;
  const settled = await waitFor("the second controller leads or stands by", async () => {
    const now = await role(url);
    if (now === "standby") return now;
    // Leading (without the fix): once its first reconcile is over, whatever it sent is counted.
    const status = (await (await fetch(`${url}/status`).catch(() => null))?.json().catch(() => null)) as {
      settled?: boolean;
    } | null;
    return now === "leader" && status?.settled ? now : undefined;
  });
  return { url, leading, now: settled };
}

it("a controller on TREE/sub stands by while one on TREE leads, sends nothing, and leads once it stops", async () => {
  const { top, sub } = await tree();
  h.controller = await startController(fastControllerOptions(h.cp, { source: { kind: "dir", dir: top } }));
  await waitFor("the tree's controller ready", () => h.controller!.ready());
  expect(await revisions()).toBe(1);

  const { url, leading, now } = await second(sub);
  expect(await revisions()).toBe(1);
  expect(now).toBe("standby");
  // One change while both run: sent once.
  await writeDoc(sub, "a.yaml", container("alpha", "img/alpha:2", { secrets }));
  await waitFor("the change applied", async () => (await revisions()) === 2);
  expect(await role(url)).toBe("standby");

  await h.controller.stop(1_000);
  h.controller = await leading;
  await waitFor("the sub-directory's controller leads", async () => (await role(url)) === "leader");
  await waitFor("its first reconcile over", () => h.controller!.ready());
  // Its own store has no fingerprint of the secret (a controller reads nothing nearby): sent once.
  expect(await revisions()).toBe(3);
}, 60_000);

it("a controller on TREE stands by while one on TREE/sub leads", async () => {
  const { top, sub } = await tree();
  h.controller = await startController(fastControllerOptions(h.cp, { source: { kind: "dir", dir: sub } }));
  await waitFor("the sub-directory's controller ready", () => h.controller!.ready());
  expect(await revisions()).toBe(1);
  const { url, leading, now } = await second(top);
  expect(await revisions()).toBe(1);
  expect(now).toBe("standby");
  await h.controller.stop(1_000);
  h.controller = await leading;
  await waitFor("the tree's controller leads", async () => (await role(url)) === "leader");
  await waitFor("its first reconcile over", () => h.controller!.ready());
  expect(await revisions()).toBe(2); // the secret, of which the tree's store has no fingerprint
}, 60_000);

it("a controller on TREE stands by while an apply of TREE/sub holds its store, then sends what is left once", async () => {
  const { top, sub } = await tree();
  h.controller = await startController(fastControllerOptions(h.cp, { source: { kind: "dir", dir: sub } }));
  await waitFor("the sub-directory's controller ready", () => h.controller!.ready());
  await h.controller.stop(1_000);
  h.controller = undefined;
  // The apply is stood for by the real state lock held on sub's store.
  const apply = await acquireStateLock(
    { statusDir: join(sub, ".plumb", "status") },
    { command: "plumb apply" },
  );
  const { url, leading, now } = await second(top);
  expect(await revisions()).toBe(1);
  expect(now).toBe("standby");
  await apply.release();
  h.controller = await leading;
  await waitFor("the tree's controller leads", async () => (await role(url)) === "leader");
  await waitFor("its first reconcile over", () => h.controller!.ready());
  // The tree's store has no fingerprint of the secret: sent once, by the one controller.
  expect(await revisions()).toBe(2);
}, 60_000);

// With --status-dir X a controller read and locked X only, where no other writer looks: one on
// TREE/sub --status-dir X and one on TREE both led, and each sent every change under sub. It now
// locks the stores nearby in use too, and its tree's default store as a mark (as apply --status-dir).
const elsewhere = () => mkdtemp(join(tmpdir(), "plumb-ctl-status-dir-"));

it("a controller on TREE/sub with --status-dir X stands by while one on TREE leads", async () => {
  const { top, sub } = await tree();
  const x = await elsewhere();
  try {
    h.controller = await startController(fastControllerOptions(h.cp, { source: { kind: "dir", dir: top } }));
    await waitFor("the tree's controller ready", () => h.controller!.ready());
    expect(await revisions()).toBe(1);
    const { now } = await second(sub, join(x, "status"));
    expect(now).toBe("standby");
    expect(await revisions()).toBe(1); // X holds no fingerprint of the secret: leading, it sent it again
  } finally {
    await rm(x, { recursive: true, force: true });
  }
}, 60_000);

it("a controller on TREE stands by while one on TREE/sub with --status-dir X leads", async () => {
  const { top, sub } = await tree();
  const x = await elsewhere();
  try {
    const options = fastControllerOptions(h.cp, {
      source: { kind: "dir", dir: sub },
      statusDir: join(x, "status"),
    });
    h.controller = await startController(options);
    await waitFor("the sub-directory's controller ready", () => h.controller!.ready());
    expect(await revisions()).toBe(1);
    const { now } = await second(top);
    expect(now).toBe("standby");
    expect(await revisions()).toBe(1);
  } finally {
    await rm(x, { recursive: true, force: true });
  }
}, 60_000);
