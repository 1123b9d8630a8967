import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeAll, beforeEach, expect, it } from "vitest";
import { acquireStateLock, readStateLock } from "../../src/lock/index.js";
import { assertBuilt } from "../support/built-cli.js";

// [safety] Two plumb processes with one host name in two PID namespaces (containers sharing the
// host's name: docker --network host, pods with hostNetwork, a fixed hostname) on one store. A
// holder whose pid is not found here was taken for "a process of this host that is gone" and its
// live lock taken at once: two writers. Real namespaces (unshare, root only; skipped elsewhere, where
// test/lock/fence-holder.test.ts says the same with a record of another space).

const canUnshare = (() => {
  try {
    execFileSync("unshare", ["--pid", "--fork", "--mount-proc", "true"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

let root: string;
let holder: ChildProcess | undefined;
beforeAll(assertBuilt);
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-pidns-"));
});
afterEach(async () => {
  if (holder && holder.exitCode === null) {
    const exited = new Promise((resolve) => holder!.once("exit", resolve));
    holder.kill("SIGKILL");
    await exited;
  }
  holder = undefined;
  await rm(root, { recursive: true, force: true });
});

/** A pid no process of this namespace has: the holder's own pid in its namespace will be it. */
function freePidAbove(min: number): number {
  for (let pid = min; ; pid++) {
    try {
      process.kill(pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ESRCH") return pid;
    }
  }
}

it.skipIf(!canUnshare)(
  "a live holder in another PID namespace with this host name keeps its lock",
  async () => {
    const statusDir = join(root, ".plumb", "status");
    const lockModule = pathToFileURL(join(process.cwd(), "dist", "src", "lock", "index.js")).href;
    const script = join(root, "holder.mjs");
    await writeFile(
      script,
      `const { acquireStateLock } = await import(${JSON.stringify(lockModule)});
const lock = await acquireStateLock({ statusDir: ${JSON.stringify(statusDir)} }, { command: "plumb controller" });
process.stdout.write("held " + process.pid + "\\n");
setInterval(() => lock.assertHeld(), 1000);
`,
    );
    // In a new PID namespace pids count from 1: forks before the holder make its pid one that no
    // process here has, as a container's would be.
    const pid = freePidAbove(50);
    const forks = `i=2; while [ $i -lt ${pid} ]; do /bin/true; i=$((i+1)); done`;
    const node = `"$0" "$1" & wait`;
    const args = [
      "--pid",
      "--fork",
      "--kill-child", // the namespace's processes die with unshare (afterEach's SIGKILL)
      "--mount-proc",
      "sh",
      "-c",
      `${forks}; ${node}`,
      process.execPath,
      script,
    ];
    holder = spawn("unshare", args, {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    await new Promise<void>((resolve, reject) => {
      holder!.stdout!.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("\n")) resolve();
      });
      holder!.once("exit", (code) => reject(new Error(`the holder exited (${code}): ${out}`)));
    });
    expect(out).toBe(`held ${pid}\n`);
    expect(() => process.kill(pid, 0)).toThrow(); // not a process of this namespace

    await expect(acquireStateLock({ statusDir }, { command: "plumb apply" })).rejects.toMatchObject({
      code: "state-locked",
      message: expect.stringContaining(`plumb controller (pid ${pid} on `),
    });
    expect(await readStateLock({ statusDir })).toMatchObject({ pid, command: "plumb controller" });
  },
  60_000,
);
