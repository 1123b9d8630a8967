import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, expect, it } from "vitest";
import { acquireStateLock } from "../../src/lock/index.js";
import { assertBuilt } from "../support/built-cli.js";

// A record is written to RECORD.json.<pid>.<hex>.tmp and renamed over; a writer SIGKILLed between
// the two left the temp file in the status directory for ever (the loader skips it, nothing removed
// it). Now the next writer to take the state lock removes those of processes gone; a live writer's
// (its pid runs) and a fresh one (a write may be in flight) stay.

const WRITER = pathToFileURL(join(process.cwd(), "dist/src/status/write/write-atomically.js")).href;

/** A child that writes `file` with the real writeRecordFile and stops at its fsync: the temp file is there. */
const CHILD = `
const { open } = await import("node:fs/promises");
const probe = await open(process.execPath, "r");
Object.getPrototypeOf(probe).datasync = () => { process.stdout.write("in-write\\n"); setInterval(() => {}, 60_000); return new Promise(() => {}); };
await probe.close();
const { writeRecordFile } = await import(${JSON.stringify(WRITER)});
await writeRecordFile(process.argv[1], "{}\\n");
`;

let dir: string;
const children: ChildProcess[] = [];

/** Starts a writer of `file` and resolves once it is inside its write (temp file made, not renamed). */
function startWriter(file: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--input-type=module", "-e", CHILD, file], { stdio: "pipe" });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("in-write")) resolve(child);
    });
    child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("exit", () => reject(new Error(`writer ended before its write:\n${out}`)));
  });
}

const killed = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.on("exit", () => resolve());
    child.kill("SIGKILL");
  });

const temps = async () => (await readdir(dir)).filter((n) => n.endsWith(".tmp")).sort();
const aged = (name: string, ms: number) => utimes(join(dir, name), new Date(), new Date(Date.now() - ms));

beforeEach(async () => {
  assertBuilt();
  dir = await mkdtemp(join(tmpdir(), "plumb-stale-temps-"));
});
afterEach(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  await rm(dir, { recursive: true, force: true });
  await rm(`${dir}.lock`, { recursive: true, force: true });
});

it("the next lock holder removes the temp files of writers killed mid-write, never a live writer's", async () => {
  await writeFile(join(dir, "Deployment-a.json"), "{}\n");
  const dead = await startWriter(join(dir, "Deployment-a.json"));
  await killed(dead);
  const deadFresh = await startWriter(join(dir, "Deployment-b.json"));
  await killed(deadFresh);
  const live = await startWriter(join(dir, "Deployment-c.json"));
  const [a, b, c] = await temps();
  expect([a, b, c].map((n) => n?.split(".")[0])).toEqual(["Deployment-a", "Deployment-b", "Deployment-c"]);
  expect(a).toContain(`.json.${dead.pid}.`);
  await aged(a!, 120_000); // killed two minutes ago
  await aged(c!, 120_000); // a live writer stopped two minutes in its write

  const lock = await acquireStateLock({ statusDir: dir }, { command: "plumb apply" });
  await lock.release();

  expect(await temps()).toEqual([b, c]); // b: a minute has not passed; c: its writer runs
  expect(existsSync(join(dir, "Deployment-a.json"))).toBe(true); // the record itself stays
  await killed(live);
  await aged(b!, 120_000);
  await aged(c!, 25 * 3_600_000);
  const again = await acquireStateLock({ statusDir: dir }, { command: "plumb apply" });
  await again.release();
  expect(await temps()).toEqual([]);
});
