import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { DEFAULT_API_KEY } from "../src/control-plane/options.js";
import { startControlPlane } from "../src/control-plane/server.js";
import { type Controller, startController } from "../src/controller/controller.js";
import { createLogger } from "../src/logger.js";
import { readPruneLedger } from "../src/status/prune-ledger.js";
import { random } from "./chaos-support.js";

// `npm run bench -- chaos`: controller --prune under random events (issue 23 [safety], item 9 for
// prune): files removed, emptied (0 bytes, comments, ---, a git-lfs pointer, a conflict marker) and
// restored, waits around --prune-delay, controller restarts. Then the invariants, counted on the
// control plane and the prune ledger: no more than --prune-max deletions in the window; no
// deployment deleted unless its file had been removed (not emptied) for at least --prune-delay;
// every deletion on the control plane is in the ledger; never two deployments of one name.
// PLUMB_CHAOS_EVENTS (default 200) and PLUMB_CHAOS_SEED (default random) vary the run.

const OBJECTS = 20;
const MAX = 5;
const DELAY_MS = 60;
const EMPTIED = [
  "",
  "# moved?\n",
  "---\n",
  `version https://git-lfs.github.com/spec/v1\noid sha256:${"ab".repeat(32)}\nsize 99\n`,
  "<<<<<<< HEAD\n",
];

type State = "present" | "removed" | "emptied";

const doc = (name: string) =>
  `apiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: ${name}\nspec:\n  source: internal_container\n  source_revision_config:\n    image_uri: img/${name}:1\n`;

const quietLogger = () =>
  createLogger({ level: "warn" }, new Writable({ write: (_chunk, _enc, done) => done() }));

export async function run(): Promise<string[]> {
  const events = Number(process.env.PLUMB_CHAOS_EVENTS ?? 200);
  const seed = Number(process.env.PLUMB_CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
  const next = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const dir = await mkdtemp(join(tmpdir(), "plumb-chaos-prune-"));
  const cp = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
  const names = Array.from({ length: OBJECTS }, (_, i) => `svc${String(i).padStart(2, "0")}`);
  /** Each name's state changes, in time order: the truth the deletions are judged against. */
  const history = new Map<string, Array<{ at: number; state: State }>>();
  const set = (name: string, state: State) => history.get(name)!.push({ at: Date.now(), state });
  const state = (name: string) => history.get(name)!.at(-1)!.state;
  const counts = { remove: 0, empty: 0, restore: 0, restart: 0, wait: 0 };
  let controller: Controller | undefined;
  const start = async () => {
    controller = await startController({
      source: { kind: "dir", dir },
      api: { apiUrl: cp.url, apiKey: DEFAULT_API_KEY, platformUrl: cp.url },
      selfHeal: false,
      prune: true,
      pruneMax: MAX,
      pruneDelayMs: DELAY_MS,
      concurrency: 4,
      debounceMs: 20,
      backoffBaseMs: 50,
      backoffMaxMs: 200,
      timeoutMs: 10_000,
      pollIntervalMs: 10,
      env: process.env,
      logger: quietLogger(),
    });
  };
  const live = async () => {
    const res = await fetch(`${cp.url}/v2/deployments?limit=100`, {
      headers: { "x-api-key": DEFAULT_API_KEY },
    });
    return ((await res.json()) as { resources: Array<{ id: string; name: string }> }).resources;
  };
  /** Every id ever seen live, and the ones seen gone: deletions counted on the control plane. */
  const seenIds = new Map<string, string>();
  const observe = async () => {
    for (const d of await live()) seenIds.set(d.id, d.name);
  };
  try {
    await writeFile(join(dir, "keep.yaml"), doc("keep"));
    for (const name of names) {
      await writeFile(join(dir, `${name}.yaml`), doc(name));
      history.set(name, [{ at: Date.now(), state: "present" }]);
    }
    await start();
    for (let i = 0; i < 200 && (await live()).length < OBJECTS + 1; i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    await observe();
    for (let i = 0; i < events; i++) {
      const roll = next();
      if (roll < 0.35) {
        const name = pick(names.filter((n) => state(n) === "present").concat(names[0]!));
        if (state(name) === "present") {
          await rm(join(dir, `${name}.yaml`));
          set(name, "removed");
          counts.remove++;
        }
      } else if (roll < 0.45) {
        const name = pick(names);
        if (state(name) === "present") {
          await writeFile(join(dir, `${name}.yaml`), pick(EMPTIED));
          set(name, "emptied");
          counts.empty++;
        }
      } else if (roll < 0.7) {
        // An emptied file is put back soon (it blocks every prune meanwhile); a removed one sometimes.
        const away = names.filter((n) => state(n) === "emptied");
        const name = away.length > 0 ? pick(away) : pick(names);
        if (state(name) !== "present") {
          // A deletion racing the write is still judged as of a removed file (it was, until now).
          await writeFile(join(dir, `${name}.yaml`), doc(name));
          set(name, "present");
          counts.restore++;
        }
      } else if (roll < 0.78) {
        await controller!.stop(2_000);
        await start();
        counts.restart++;
      } else {
        await new Promise((resolve) => setTimeout(resolve, Math.floor(next() * 2 * DELAY_MS)));
        counts.wait++;
      }
      await controller!.rescan();
      await observe();
    }
    // Settle: every pending removal is seen again after the delay.
    await new Promise((resolve) => setTimeout(resolve, 3 * DELAY_MS));
    await controller!.rescan();
    await new Promise((resolve) => setTimeout(resolve, 3 * DELAY_MS));
    await controller!.rescan();
    await observe();

    const violations: string[] = [];
    const liveIds = new Set((await live()).map((d) => d.id));
    const deleted = [...seenIds].filter(([id]) => !liveIds.has(id));
    const ledger = await readPruneLedger(join(dir, ".plumb", "status"));
    if (deleted.length > MAX)
      violations.push(`${deleted.length} deletions, over --prune-max ${MAX} in the window`);
    for (const [id, name] of deleted)
      if (!ledger.some((e) => e.id === id)) violations.push(`${name} (${id}) deleted but not in the ledger`);
    for (const entry of ledger) {
      const at = Date.parse(entry.at);
      const before = history.get(entry.name)!.filter((h) => h.at <= at);
      const last = before.at(-1);
      if (!last || last.state !== "removed")
        violations.push(`${entry.name} deleted while ${last?.state ?? "unknown"}`);
      else if (at - last.at < DELAY_MS)
        violations.push(
          `${entry.name} deleted ${at - last.at} ms after its removal (< --prune-delay ${DELAY_MS})`,
        );
    }
    const byName = new Map<string, number>();
    for (const d of await live()) byName.set(d.name, (byName.get(d.name) ?? 0) + 1);
    for (const [name, n] of byName) if (n > 1) violations.push(`${n} deployments named ${name}`);
    if (violations.length > 0) process.exitCode = 1;
    return [
      `chaos prune: ${events} events (seed ${seed}): ${counts.remove} removals, ${counts.empty} emptied, ${counts.restore} restores, ${counts.restart} restarts, ${counts.wait} waits`,
      `deletions: ${deleted.length} (--prune-max ${MAX} per 1h, --prune-delay ${DELAY_MS} ms); ledger entries: ${ledger.length}`,
      `invariant violations: ${violations.length}${violations.length > 0 ? " FAIL" : " (target 0) OK"}`,
      ...violations.slice(0, 20).map((v) => `  ${v}`),
    ];
  } finally {
    await controller?.stop(2_000);
    await cp.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
