import { randomUUID } from "node:crypto";
import { mkdir, readdir, rename, rm, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { isDeadLocalHolder } from "../../lock/holder.js";
import { MAX_HOLDER_BYTES, readStateFile } from "../../status/state-file.js";
import type { Logger } from "../../logger.js";
import { errorMessage } from "../error-message.js";

// How many controller replicas share the environments: each replica writes a heartbeat file (a
// counter it bumps every third of the lease) in the replicas directory beside the environments'
// status stores, and counts as live every file it has seen change within one lease on its own
// monotonic clock (a file seen for the first time counts, for one lease) — no clock is compared
// between hosts, as for the state lock. A file of a process of this host that is gone does not
// count at all (kill -9 fails over at once). Replicas that cannot see each other's directory each
// count themselves alone: every environment still has one leader (its lock), the spread is uneven.

export type Replicas = {
  self: string;
  /** Live replicas, this one included (at least 1). */
  live: () => number;
  stop(): Promise<void>;
};

type Beat = { id: string; host: string; pid: number; beat: number };
type Seen = { text: string; changedAt: number; beat: Beat | null };

/** Pure: how many environments one replica leads at most: ceil(environments / live replicas). */
export const shareOf = (environments: number, live: number): number =>
  Math.ceil(environments / Math.max(1, live));

export const defaultReplicaId = (): string => `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;

export async function startReplicas(options: {
  dir: string;
  id: string;
  leaseMs: number;
  log: Logger;
  monotonic?: () => number;
}): Promise<Replicas> {
  const { dir, id, leaseMs, log } = options;
  const now = options.monotonic ?? (() => performance.now());
  const own = join(dir, `${id}.json`);
  const seen = new Map<string, Seen>();
  let beat = 0;
  let live = 1;
  await mkdir(dir, { recursive: true });

  const write = async () => {
    const text = JSON.stringify({ id, host: hostname(), pid: process.pid, beat: ++beat } satisfies Beat);
    await writeFile(`${own}.tmp`, text);
    await rename(`${own}.tmp`, own);
  };
  const look = async () => {
    const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith(".json"));
    const at = now();
    let count = 1;
    for (const file of files) {
      if (join(dir, file) === own) continue;
      // Not blocking on a FIFO put there, bounded (status/state-file.ts); unreadable: no beat.
      const text = await readStateFile(join(dir, file), MAX_HOLDER_BYTES, "a heartbeat").catch(() => "");
      const before = seen.get(file);
      const next: Seen =
        before && before.text === text ? before : { text, changedAt: at, beat: parseBeat(text) };
      seen.set(file, next);
      const dead = next.beat !== null && isDeadLocalHolder({ ...next.beat, command: "", since: "" });
      if (!dead && at - next.changedAt < leaseMs) count++;
    }
    for (const file of seen.keys()) if (!files.includes(file)) seen.delete(file);
    if (count !== live) log.info({ replicas: count }, "live controller replicas changed");
    live = count;
  };
  const tick = async () => {
    await write().catch((error: unknown) =>
      log.warn({ err: errorMessage(error), dir }, "cannot write this replica's heartbeat"),
    );
    await look();
  };
  await tick();
  const timer = setInterval(() => void tick(), Math.max(100, leaseMs / 3));
  timer.unref();
  return {
    self: id,
    live: () => live,
    async stop() {
      clearInterval(timer);
      await rm(own, { force: true });
    },
  };
}

function parseBeat(text: string): Beat | null {
  try {
    const value = JSON.parse(text) as Partial<Beat>;
    return typeof value.host === "string" && typeof value.pid === "number"
      ? { id: String(value.id), host: value.host, pid: value.pid, beat: Number(value.beat) }
      : null;
  } catch {
    return null;
  }
}
