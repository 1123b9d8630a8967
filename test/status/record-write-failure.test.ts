import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { assertBuilt } from "../support/built-cli.js";

// A record whose write fails half-way (a full disk: ENOSPC; here a file-size limit: EFBIG) leaves no
// temporary file behind. Each failed write left its `.tmp` (and the blocks it got), and a full disk
// is written again at every apply and every reconcile of the controller: files piled up where there
// was no room. The limit is a process's (ulimit -f), so the write runs in a child: the built store.

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const SCRIPT = `
const { saveObjectStatus } = await import(process.argv[1]);
const record = {
  kind: "Deployment", name: "big", id: null, latest_revision_id: null, active_revision_id: null,
  revision_status: null, sync: "OutOfSync", health: "Progressing", git_commit: null,
  manifest_digest: null, secret_fingerprints: null, applied_at: null,
  updated_at: new Date(0).toISOString(), last_error: "x".repeat(8192),
};
try { await saveObjectStatus(process.argv[2], record); console.log("written"); }
catch (error) { console.log("failed", error.code); }
`;

it("a record write that fails part-way leaves no temporary file in the store", async () => {
  assertBuilt();
  const dir = await mkdtemp(join(tmpdir(), "plumb-record-write-"));
  dirs.push(dir);
  const store = join(process.cwd(), "dist", "src", "status", "write", "save-records.js");
  // 4 KiB at most per file: the 8 KiB record's write stops with EFBIG (Node ignores SIGXFSZ).
  const { stdout: out } = await promisify(execFile)("bash", [
    "-c",
    'ulimit -f 4 && exec "$0" --input-type=module -e "$1" "$2" "$3"',
    process.execPath,
    SCRIPT,
    store,
    dir,
  ]);
  expect(out.trim()).toBe("failed status-write-failed");
  expect(await readdir(dir)).toEqual([]);
});
