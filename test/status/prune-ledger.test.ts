import { appendFile, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import {
  deletionsWithin,
  PRUNE_LEDGER_FILE,
  readPruneLedger,
  recordPruneDeletion,
} from "../../src/status/prune-ledger.js";
import { loadStatusStore } from "../../src/status/status-store.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-ledger-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const at = (ms: number) => new Date(ms).toISOString();

it("appends deletions, counts those in the window, and skips a torn last line", async () => {
  const hour = 3_600_000;
  const now = Date.parse("2026-01-01T12:00:00Z");
  await recordPruneDeletion(dir, { at: at(now - 2 * hour), kind: "Deployment", name: "old", id: "1" });
  await recordPruneDeletion(dir, { at: at(now - 10_000), kind: "Deployment", name: "new", id: "2" });
  await appendFile(join(dir, PRUNE_LEDGER_FILE), '{"at":"2026-01-01T11:59');
  const entries = await readPruneLedger(dir);
  expect(entries.map((e) => e.name)).toEqual(["old", "new"]);
  expect(deletionsWithin(entries, now, hour).map((e) => e.name)).toEqual(["new"]);
  // Not read as a status record.
  expect((await loadStatusStore(dir)).problems).toEqual([]);
});

it("a missing ledger is empty; a long one is rewritten without entries older than a week", async () => {
  expect(await readPruneLedger(join(dir, "none"))).toEqual([]);
  const now = Date.parse("2026-01-10T00:00:00Z");
  const old = Array.from({ length: 1_000 }, (_, i) =>
    JSON.stringify({ at: at(now - 8 * 24 * 3_600_000), kind: "Deployment", name: `o${i}`, id: `${i}` }),
  );
  await appendFile(join(dir, PRUNE_LEDGER_FILE), `${old.join("\n")}\n`);
  // Old against the newest entry the ledger holds, not the writer's clock alone (one a week ahead
  // dropped every entry, test/reconcile/probe-safety-prune-clock.test.ts): the fresh one first.
  await recordPruneDeletion(dir, { at: at(now), kind: "Deployment", name: "fresh", id: "f" });
  expect((await readFile(join(dir, PRUNE_LEDGER_FILE), "utf8")).trim().split("\n")).toHaveLength(1_001);
  await recordPruneDeletion(dir, { at: at(now + 1), kind: "Deployment", name: "next", id: "n" });
  expect((await readFile(join(dir, PRUNE_LEDGER_FILE), "utf8")).trim().split("\n")).toHaveLength(2);
});
