import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadStatusStore } from "../../src/status/status-store.js";
import { anyFile, saveObjectStatus } from "../../src/status/write/save-records.js";
import { sampleStatus } from "../reconcile/fixtures.js";

// Loading a status store: the names a caller says not to trust (git/records/tracked-records.ts: the
// records git tracks), and a record written from a count below 0.

let dir: string;
beforeEach(async () => {
  dir = join(await mkdtemp(join(tmpdir(), "plumb-st-load-")), "status");
  await mkdir(dir, { recursive: true });
});
afterEach(() => rm(join(dir, ".."), { recursive: true, force: true }));

describe("loading a status store", () => {
  it("does not trust a record it is told to ignore: reported with the reason given, its object not loaded", async () => {
    await saveObjectStatus(dir, sampleStatus("committed"), anyFile);
    await saveObjectStatus(dir, sampleStatus("own"), anyFile);
    const why = "tracked by git, so not trusted as plumb's own record";
    const store = await loadStatusStore(dir, new Map([["deployment.committed.json", why]]));
    expect([...store.objects.keys()]).toEqual(["Deployment/own"]);
    expect(store.problems).toEqual([{ file: join(dir, "deployment.committed.json"), message: why }]);
  });

  it("a write given a count below 0 counts from 1: the record it writes reads back (records say 0 or more)", async () => {
    // A negative count continued would write seq -2, a record the store then reports as damaged.
    await saveObjectStatus(dir, { ...sampleStatus("a"), seq: -3 }, anyFile);
    const written = JSON.parse(await readFile(join(dir, "deployment.a.json"), "utf8")) as { seq: number };
    expect(written.seq).toBe(1);
    const store = await loadStatusStore(dir);
    expect(store.problems).toEqual([]);
    expect(store.objects.get("Deployment/a")).toMatchObject({ seq: 1 });
  });
});
