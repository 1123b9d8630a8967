import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { runApply } from "../src/cli/sync/apply.js";
import { runDrift } from "../src/cli/sync/drift.js";
import { DEFAULT_API_KEY } from "../src/control-plane/options.js";
import { startControlPlane } from "../src/control-plane/server.js";
import { type Controller, startController } from "../src/controller/controller.js";
import { createLogger } from "../src/logger.js";
import { chaosSettings, controlPlane, memoryIo, random, sleep } from "./chaos-support.js";

// `npm run bench -- chaos`: the three-way model under random events (issue 23 [safety], item 6): a
// controller (no --self-heal) on a directory while git is edited (img/NAME:vN, N rising), live is
// edited in the UI (img/NAME:ui-K), `plumb drift --write` runs racing the controller's applies, and
// the controller restarts. The invariants, counted on the control plane:
// - drift --write never reverts an edit in flight: a git version it overwrites was applied before
//   (a revision of it exists);
// - no git version is applied twice or after a newer one (a restart re-applying git over drift, or a
//   reverted edit applied again, shows as a repeated or falling version in the revisions);
// - every edit is applied: at the end, a file holding img/NAME:vN has a revision of it;
// - one deployment per name.

const NAMES = ["d0", "d1", "d2", "d3", "d4", "d5"];
const doc = (name: string, image: string) =>
  `apiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: ${name}\nspec:\n  source: internal_container\n  source_revision_config:\n    image_uri: ${image}\n`;
const versionOf = (image: string) => Number(/:v(\d+)$/.exec(image)?.[1] ?? Number.NaN);
const imageIn = (text: string) => /image_uri: "?([^"\n]+)"?/.exec(text)?.[1] ?? "";
const quietLogger = () =>
  createLogger({ level: "error" }, new Writable({ write: (_chunk, _enc, done) => done() }));

export async function run(): Promise<string[]> {
  const { events, seed } = chaosSettings();
  const next = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const dir = await mkdtemp(join(tmpdir(), "plumb-chaos-three-way-"));
  const cp = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
  const api = controlPlane(cp.url);
  const version = new Map(NAMES.map((n) => [n, 1]));
  const counts = { git: 0, ui: 0, driftWrite: 0, written: 0, restart: 0, wait: 0 };
  const violations: string[] = [];
  let controller: Controller | undefined;
  const start = async () => {
    controller = await startController({
      source: { kind: "dir", dir },
      api: { apiUrl: cp.url, apiKey: DEFAULT_API_KEY, platformUrl: cp.url },
      selfHeal: false,
      concurrency: 3,
      debounceMs: 20,
      backoffBaseMs: 50,
      backoffMaxMs: 200,
      timeoutMs: 10_000,
      pollIntervalMs: 10,
      maxPollIntervalMs: 50,
      env: process.env,
      logger: quietLogger(),
    });
  };
  const idOf = async (name: string) => (await api.deployments()).find((d) => d.name === name)?.id;
  const applied = async (name: string, image: string) => {
    const id = await idOf(name);
    return !!id && (await api.images(id)).includes(image);
  };
  const files = async () =>
    new Map(
      await Promise.all(
        NAMES.map(async (n) => [n, imageIn(await readFile(join(dir, `${n}.yaml`), "utf8"))] as const),
      ),
    );
  try {
    for (const name of NAMES) await writeFile(join(dir, `${name}.yaml`), doc(name, `img/${name}:v1`));
    if (
      (await runApply(
        dir,
        { target: [], wait: true, timeout: 60_000, concurrency: 4, yes: true, output: "text" },
        memoryIo(cp.url),
      )) !== 0
    )
      throw new Error("the first apply failed");
    await start();
    let ui = 0;
    for (let i = 0; i < events; i++) {
      const roll = next();
      const name = pick(NAMES);
      if (roll < 0.35) {
        const n = version.get(name)! + 1;
        version.set(name, n);
        await writeFile(join(dir, `${name}.yaml`), doc(name, `img/${name}:v${n}`));
        counts.git++;
      } else if (roll < 0.55) {
        const id = await idOf(name);
        if (id)
          await api.call("PATCH", `/v2/deployments/${id}`, {
            source_revision_config: { image_uri: `img/${name}:ui-${++ui}` },
          });
        counts.ui++;
      } else if (roll < 0.8) {
        // Racing the controller, which may be applying the edits just made.
        const before = await files();
        await runDrift(dir, { output: "text", target: [], write: true, lockTimeout: 0 }, memoryIo(cp.url));
        const after = await files();
        for (const [n, image] of before) {
          if (after.get(n) === image) continue;
          counts.written++;
          const v = versionOf(image);
          if (!Number.isNaN(v) && !(await applied(n, image)))
            violations.push(`drift --write reverted ${n}'s edit ${image} (never applied) to ${after.get(n)}`);
        }
        counts.driftWrite++;
      } else if (roll < 0.88) {
        await controller!.stop(2_000);
        await start();
        counts.restart++;
      } else {
        await sleep(Math.floor(next() * 60));
        counts.wait++;
      }
    }
    // Settle: the controller applies what is left.
    await controller!.rescan();
    for (
      let i = 0;
      i < 200 && controller!.status().queue.running + controller!.status().queue.pending > 0;
      i++
    )
      await sleep(25);
    await sleep(200);

    const live = await api.deployments();
    const final = await files();
    for (const name of NAMES) {
      const mine = live.filter((d) => d.name === name);
      if (mine.length !== 1) violations.push(`${mine.length} deployments named ${name}`);
      if (mine.length === 0) continue;
      const versions = (await api.images(mine[0]!.id)).map(versionOf).filter((v) => !Number.isNaN(v));
      for (let k = 1; k < versions.length; k++)
        if (versions[k]! <= versions[k - 1]!)
          violations.push(
            `${name}: revision of v${versions[k]} after v${versions[k - 1]} (a revert or a re-send)`,
          );
      const image = final.get(name)!;
      if (!Number.isNaN(versionOf(image)) && !(await applied(name, image)))
        violations.push(`${name}: git's ${image} was never applied (an edit lost)`);
    }
    if (violations.length > 0) process.exitCode = 1;
    return [
      `chaos three-way: ${events} events (seed ${seed}): ${counts.git} git edits, ${counts.ui} UI edits, ${counts.driftWrite} drift --write (${counts.written} fields written back), ${counts.restart} controller restarts, ${counts.wait} waits`,
      `invariant violations: ${violations.length}${violations.length > 0 ? " FAIL" : " (target 0) OK"}`,
      ...violations.slice(0, 20).map((v) => `  ${v}`),
    ];
  } finally {
    await controller?.stop(2_000);
    await cp.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
