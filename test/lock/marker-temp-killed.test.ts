import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readdir, rm, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, expect, it } from "vitest";
import { acquireStateLock } from "../../src/lock/index.js";
import { assertBuilt } from "../support/built-cli.js";

// The holder record an older plumb reads (`<lock>.json`) is written to `<lock>.json.<uuid>.tmp` and
// renamed over by each new holder; a holder SIGKILLed between the two left the temp file beside the
// lock for ever. The next holder now removes those a minute old (never a write in flight).

const LEGACY = pathToFileURL(join(process.cwd(), "dist/src/lock/local/legacy-lock.js")).href;

/** A child that writes the marker with the real writeLegacyMarker and stops at its rename. */
const CHILD = `
const fsp = (await import("node:fs/promises")).default;
fsp.rename = () => { process.stdout.write("in-write\\n"); setInterval(() => {}, 60_000); return new Promise(() => {}); };
(await import("node:module")).syncBuiltinESMExports();
const { writeLegacyMarker } = await import(${JSON.stringify(LEGACY)});
await writeLegacyMarker(process.argv[1], { id: "killed", host: "h", pid: process.pid, command: "plumb apply", since: "" });
`;

let root: string;
const children: ChildProcess[] = [];

/** Runs a marker writer for `lockPath` into its rename, then SIGKILLs it. */
async function killedInWrite(lockPath: string): Promise<void> {
  const child = spawn(process.execPath, ["--input-type=module", "-e", CHILD, lockPath], { stdio: "pipe" });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("in-write")) resolve();
    });
    child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("exit", () => reject(new Error(`writer ended before its rename:\n${out}`)));
  });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

const temps = async () => (await readdir(root)).filter((n) => n.endsWith(".tmp")).sort();

beforeEach(async () => {
  assertBuilt();
  root = await mkdtemp(join(tmpdir(), "plumb-marker-temp-"));
});
afterEach(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  await rm(root, { recursive: true, force: true });
});

it("the next holder removes the holder-record temp files of holders killed a minute ago at least", async () => {
  const statusDir = join(root, "status");
  const lockPath = `${statusDir}.lock`;
  await killedInWrite(lockPath);
  const [old] = await temps();
  expect(old).toMatch(/^status\.lock\.json\.[0-9a-f-]{36}\.tmp$/);
  await utimes(join(root, old!), new Date(), new Date(Date.now() - 120_000));
  await killedInWrite(lockPath); // just now: kept this time

  const lock = await acquireStateLock({ statusDir }, { command: "plumb apply" });
  await lock.release();

  const left = await temps();
  expect(left).toHaveLength(1);
  expect(left).not.toContain(old);
});
