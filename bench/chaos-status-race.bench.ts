import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runApply } from "../src/cli/sync/apply.js";
import { runDrift } from "../src/cli/sync/drift.js";
import { statusCommand } from "../src/cli/sync/status.js";
import { startControlPlane } from "../src/control-plane/server.js";
import { chaosSettings, controlPlane, memoryIo, random, sleep } from "./chaos-support.js";

// `npm run bench -- chaos`: record refreshes racing applies (issue 23 [safety], item 7). Applies of a
// new secret value each (one after another, waiting for the state lock) while `plumb status` and
// `plumb drift` refresh the records at random moments, overlapping them (waiting for the lock, or
// not: then they report only). A refresh that wrote back the fingerprints it had read before an apply
// recorded new ones would make the next apply send the secret again. The invariants, counted on the
// control plane: every apply that ran made exactly one revision per deployment (its secret change);
// at the end an apply with the last value sends nothing; one deployment per name.

// Eight objects applied two at a time: a refresh that reads the store while an apply is halfway
// through its objects can see records the apply has not reached yet.
const NAMES = Array.from({ length: 8 }, (_, i) => `svc${String(i).padStart(2, "0")}`);
const doc = (name: string) =>
  `apiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: ${name}\nspec:\n  source: internal_container\n  source_revision_config:\n    image_uri: img/${name}:1\n  secrets:\n    - name: TOKEN\n      valueFrom:\n        env: TOKEN\n`;
const flags = { target: [], wait: true, timeout: 60_000, concurrency: 2, yes: true, output: "text" as const };

export async function run(): Promise<string[]> {
  const { events, seed } = chaosSettings();
  const next = random(seed);
  const dir = await mkdtemp(join(tmpdir(), "plumb-chaos-status-race-"));
  const cp = await startControlPlane({ revisionSeconds: 0.05, deploymentReadySeconds: 0 });
  const api = controlPlane(cp.url);
  const counts = { apply: 0, status: 0, drift: 0, wait: 0, failed: 0 };
  const violations: string[] = [];
  const exitCode = process.exitCode;
  let token = 0;
  let applies: Promise<unknown> = Promise.resolve();
  const refreshes: Promise<unknown>[] = [];
  const lockTimeout = () => (next() < 0.5 ? 0 : 5_000);
  try {
    for (const name of NAMES) await writeFile(join(dir, `${name}.yaml`), doc(name));
    if ((await runApply(dir, flags, memoryIo(cp.url, { TOKEN: "t-0" }))) !== 0)
      throw new Error("the first apply failed");
    for (let i = 0; i < events; i++) {
      const roll = next();
      if (roll < 0.3) {
        const io = memoryIo(cp.url, { TOKEN: `t-${++token}` });
        applies = applies.then(async () => {
          const code = await runApply(dir, { ...flags, lockTimeout: 30_000 }, io);
          if (code === 0) counts.apply++;
          else {
            counts.failed++;
            violations.push(`an apply failed (exit ${code}): ${io.out().slice(-300)}`);
          }
        });
      } else if (roll < 0.6) {
        const io = memoryIo(cp.url, { TOKEN: `t-${token}` });
        const args = ["node", "plumb", dir, "--lock-timeout", `${lockTimeout()}ms`];
        refreshes.push(
          statusCommand(io)
            .parseAsync(args)
            .catch((e: unknown) => violations.push(`status: ${String(e)}`)),
        );
        counts.status++;
      } else if (roll < 0.9) {
        const io = memoryIo(cp.url, { TOKEN: `t-${token}` });
        refreshes.push(
          runDrift(dir, { output: "text", target: [], lockTimeout: lockTimeout() }, io).catch((e: unknown) =>
            violations.push(`drift: ${String(e)}`),
          ),
        );
        counts.drift++;
      } else {
        await sleep(Math.floor(next() * 40));
        counts.wait++;
      }
      // Let the operations interleave rather than all start at once.
      await sleep(Math.floor(next() * 15));
    }
    await applies;
    await Promise.all(refreshes);

    const last = memoryIo(cp.url, { TOKEN: `t-${token}` });
    if ((await runApply(dir, flags, last)) !== 0 || !last.out().includes("No changes"))
      violations.push(
        `the last value was applied, yet the next apply sends again: ${last.out().slice(-300)}`,
      );
    const live = await api.deployments();
    for (const name of NAMES) {
      const mine = live.filter((d) => d.name === name);
      if (mine.length !== 1) violations.push(`${mine.length} deployments named ${name}`);
      if (mine.length === 0) continue;
      const revisions = (await api.images(mine[0]!.id)).length;
      if (revisions !== 1 + counts.apply)
        violations.push(
          `${name}: ${revisions} revisions for ${counts.apply} secret changes (want ${1 + counts.apply})`,
        );
    }
    process.exitCode = violations.length > 0 ? 1 : exitCode;
    return [
      `chaos status-race: ${events} events (seed ${seed}): ${counts.apply} applies of a new secret value, ${counts.status} status and ${counts.drift} drift refreshes racing them, ${counts.wait} waits`,
      `invariant violations: ${violations.length}${violations.length > 0 ? " FAIL" : " (target 0) OK"}`,
      ...violations.slice(0, 20).map((v) => `  ${v}`),
    ];
  } finally {
    await cp.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
