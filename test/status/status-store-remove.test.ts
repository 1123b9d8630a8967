import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  anyFile,
  type OwnFile,
  removeObjectStatus,
  removeObservedStatus,
  saveObjectStatus,
} from "../../src/status/write/save-records.js";
import { sampleStatus } from "../reconcile/fixtures.js";

// Removing records: whether a file is the store's own is asked only when a file is there (the
// answer can cost a git process), and a record another writer removed meanwhile is removed already.

let dir: string;
beforeEach(async () => {
  dir = join(await mkdtemp(join(tmpdir(), "plumb-st-remove-")), "status");
  await mkdir(dir, { recursive: true });
});
afterEach(() => rm(join(dir, ".."), { recursive: true, force: true }));

/** anyFile, counting the names it is asked about. */
function countingOwn(): OwnFile & { asked: string[] } {
  const asked: string[] = [];
  return Object.assign((name: string) => (asked.push(name), Promise.resolve(true)), { asked });
}

describe("removing status records", () => {
  it("asks nothing about a record that is not there", async () => {
    const own = countingOwn();
    expect(await removeObservedStatus(dir, sampleStatus("gone"), own)).toBe(true);
    await removeObjectStatus(dir, "Deployment", "gone", own);
    expect(own.asked).toEqual([]);
    await saveObjectStatus(dir, sampleStatus("here"), anyFile);
    expect(await removeObservedStatus(dir, sampleStatus("here", { seq: 1 }), own)).toBe(true);
    expect(own.asked).toEqual(["deployment.here.json"]);
  });

  it("an observed removal whose record another writer removed meanwhile is done, not a failure", async () => {
    await saveObjectStatus(dir, sampleStatus("a"), anyFile);
    // The other writer (another plumb on the store) removes it while this one asks whether it is its own.
    const removedMeanwhile: OwnFile = async (name) => {
      await rm(join(dir, name));
      return true;
    };
    expect(await removeObservedStatus(dir, sampleStatus("a", { seq: 1 }), removedMeanwhile)).toBe(true);
    expect(await readdir(dir)).toEqual([]);
  });
});
