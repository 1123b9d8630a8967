import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { checkPruneBudget, countInLedger } from "../../src/reconcile/prune/prune-budget.js";
import { PRUNE_LEDGER_FILE } from "../../src/status/prune-ledger.js";

// --prune-window was judged by wall clocks alone: a clock stepped forward past the window (NTP
// correcting a clock that ran behind, a VM resumed, a skewed host) made the deletions just counted
// look an hour old, and the next run deleted --prune-max more at once. On one machine the ledger
// also says how long ago each deletion was on the clock since boot, which no step moves.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-prune-clock-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const T = Date.parse("2026-11-27T10:00:00.000Z");
const HOUR = 3_600_000;
const clockAt = (now: number) => ({ now: () => now, sleep: async () => undefined });
const boot = (ms: number) => ({ id: "boot-a", ms });
const deletes = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    kind: "Deployment" as const,
    name: `d${i}`,
    id: `id-${i}`,
    action: "delete" as const,
  }));
/** A deployment none of the tests counted before: the one a later run would delete. */
const another = () => [{ kind: "Deployment" as const, name: "new", id: "id-new", action: "delete" as const }];

async function countFive(at: number, sinceBoot: number) {
  const count = countInLedger(dir, clockAt(at), () => boot(sinceBoot));
  for (const d of deletes(5)) await count(d);
}

it("a wall clock stepped forward past the window does not free the budget on the same boot", async () => {
  await countFive(T, 50_000);
  const check = { statusDir: dir, limits: {}, who: "apply --prune", deletes: another() };
  // two hours later by the wall, one minute later by the clock since boot
  const { budget, refused } = await checkPruneBudget({
    ...check,
    now: T + 2 * HOUR,
    boot: () => boot(110_000),
  });
  expect(budget.used).toBe(5);
  expect(refused?.code).toBe("prune-limit");
  // an hour later on both clocks, the window has passed
  const later = await checkPruneBudget({ ...check, now: T + HOUR + 1, boot: () => boot(50_000 + HOUR + 1) });
  expect(later.refused).toBeNull();
  // another boot (another machine, a restart): the wall clock is all there is
  const other = await checkPruneBudget({
    ...check,
    now: T + 2 * HOUR,
    boot: () => ({ id: "boot-b", ms: 1 }),
  });
  expect(other.refused).toBeNull();
});

it("a wall clock stepped back still counts the deletions it now sees in the future", async () => {
  await countFive(T, 50_000);
  const check = { statusDir: dir, limits: {}, who: "apply --prune", deletes: another() };
  const { refused } = await checkPruneBudget({
    ...check,
    now: T - 3 * HOUR,
    boot: () => ({ id: "boot-b", ms: 1 }),
  });
  expect(refused?.code).toBe("prune-limit");
});

it("a long ledger rewritten by a clock a week ahead keeps the recent deletions", async () => {
  const old = Array.from({ length: 1_000 }, (_, i) =>
    JSON.stringify({
      at: new Date(T - 60_000 + i).toISOString(),
      kind: "Deployment",
      name: `o${i}`,
      id: `o${i}`,
    }),
  );
  await writeFile(join(dir, PRUNE_LEDGER_FILE), `${old.join("\n")}\n`);
  // another machine's clock, eight days ahead, counts one deletion: the rewrite drops what it thinks old
  await countInLedger(dir, clockAt(T + 8 * 24 * HOUR), () => ({ id: "boot-b", ms: 1 }))(deletes(1)[0]!);
  const lines = (await readFile(join(dir, PRUNE_LEDGER_FILE), "utf8")).trim().split("\n");
  expect(lines.length).toBe(1_001);
  const check = { statusDir: dir, limits: {}, who: "apply --prune", deletes: deletes(1) };
  const { budget } = await checkPruneBudget({ ...check, now: T, boot: () => ({ id: "boot-c", ms: 1 }) });
  expect(budget.used).toBe(1_001);
});

it("a prune resumed while its deployments are still being deleted takes no more of the budget", async () => {
  // Killed at the limit after counting five (sent or not): the rerun lists the same five (those
  // never sent; AWAITING_DELETE ones are only waited for) and sends those DELETEs. Same ids.
  await countFive(T, 50_000);
  const check = {
    statusDir: dir,
    limits: {},
    who: "apply --prune",
    now: T + 60_000,
    boot: () => boot(110_000),
  };
  expect((await checkPruneBudget({ ...check, deletes: deletes(5) })).refused).toBeNull();
  const count = countInLedger(dir, clockAt(T + 60_000), () => boot(110_000));
  for (const d of deletes(5)) await count(d);
  const lines = (await readFile(join(dir, PRUNE_LEDGER_FILE), "utf8")).trim().split("\n");
  expect(lines).toHaveLength(5);
  // a deployment not counted yet still needs room the window does not have
  const { budget, refused } = await checkPruneBudget({ ...check, deletes: [...deletes(5), ...another()] });
  expect(budget.used).toBe(5);
  expect(refused?.code).toBe("prune-limit");
  expect(refused?.message).toContain("new");
  expect(refused?.message).not.toContain("d0");
});

it("a deployment the control plane is deleting already takes no room: nothing is sent for it", async () => {
  await countFive(T, 50_000);
  const check = {
    statusDir: dir,
    limits: {},
    who: "apply --prune",
    now: T + 60_000,
    boot: () => boot(110_000),
  };
  // AWAITING_DELETE, not in the ledger (a deletion made elsewhere): apply --prune only waits for it
  const deleting = [{ ...another()[0]!, deleting: true as const }];
  expect((await checkPruneBudget({ ...check, deletes: deleting })).refused).toBeNull();
  expect((await checkPruneBudget({ ...check, deletes: another() })).refused?.code).toBe("prune-limit");
});
