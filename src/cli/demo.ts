import { existsSync } from "node:fs";
import { cp, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { Command } from "commander";
import { createColors } from "picocolors";
import { type Controller, startController } from "../controller/controller.js";
import { DEFAULT_API_KEY } from "../control-plane/options.js";
import { startControlPlane } from "../control-plane/server.js";
import { PlumbError } from "../errors.js";
import { createLogger } from "../logger.js";
import { runApply } from "./apply.js";

// `plumb demo` (npm start): a local control plane in this process, the SaaS examples in a temporary
// directory, apply with progress, then the controller watching the directory until Ctrl-C.

export type DemoIo = {
  stdout: { write(text: string): unknown; isTTY?: boolean };
  stderr: { write(text: string): unknown };
  env: NodeJS.ProcessEnv;
  /** Resolves when the demo should stop (default: SIGINT or SIGTERM). */
  stopSignal?: Promise<unknown>;
  /** Called once the controller is watching (tests edit files then). */
  onWatching?: (info: { dir: string; controller: Controller }) => void;
};

export type DemoOptions = { once: boolean; revisionSeconds: number };

/** The examples shipped with plumb, from src/cli or dist/src/cli. */
export function findExamples(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = join(dir, "examples", "saas");
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new PlumbError(
    "demo-examples-missing",
    "examples/saas not found next to plumb; run from the repository",
  );
}

/** Controller log lines, shortened for people watching the demo. */
function humanLog(out: DemoIo["stdout"], color: boolean): Writable {
  const c = createColors(color);
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) {
        try {
          const entry = JSON.parse(line) as Record<string, unknown>;
          const time = new Date(entry.time as number).toISOString().slice(11, 19);
          const skip = new Set(["level", "time", "pid", "hostname", "msg", "name", "v", "kind"]);
          const who =
            typeof entry.kind === "string" && typeof entry.name === "string"
              ? `${entry.kind}/${entry.name} `
              : "";
          const rest = Object.entries(entry)
            .filter(([k, v]) => !skip.has(k) && v !== null && v !== undefined)
            .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
            .join(" ");
          const level = entry.level as number;
          const paint = level >= 50 ? c.red : level >= 40 ? c.yellow : (s: string) => s;
          out.write(`${c.dim(time)} ${paint(String(entry.msg))} ${c.bold(who)}${c.dim(rest)}\n`);
        } catch {
          out.write(`${line}\n`);
        }
      }
      done();
    },
  });
}

export async function runDemo(io: DemoIo, options: DemoOptions): Promise<number> {
  const color = Boolean(io.stdout.isTTY) && !io.env.NO_COLOR;
  const c = createColors(color);
  const say = (text: string) => io.stdout.write(`${text}\n`);
  const step = (text: string) => say(`\n${c.bold(c.cyan(`==> ${text}`))}`);

  const controlPlane = await startControlPlane({
    port: 0,
    revisionSeconds: options.revisionSeconds,
    runSeconds: 0.5,
    deploymentReadySeconds: 0.5,
  });
  const dir = await mkdtemp(join(tmpdir(), "plumb-demo-"));
  let controller: Controller | undefined;
  try {
    await cp(findExamples(), dir, { recursive: true });
    for (const skipped of await dropTarballSources(dir))
      say(
        c.dim(
          `(skipping ${skipped}: internal_source needs a source tarball upload, which the demo does not do)`,
        ),
      );
    // Demo values for the secrets the examples read from the environment; nothing real leaves this machine.
    const env: NodeJS.ProcessEnv = {
      ...io.env,
      OPENAI_API_KEY: "sk-demo-not-a-real-key",
      PLUMB_API_URL: controlPlane.url,
      PLUMB_API_KEY: DEFAULT_API_KEY,
      PLUMB_PLATFORM_URL: controlPlane.url,
    };
    delete env.PLUMB_TENANT_ID;
    step(
      `Local control plane on ${controlPlane.url} (in memory, revision steps of ${options.revisionSeconds}s)`,
    );
    say(`Manifests: a copy of examples/saas in ${dir}`);

    step("plan -> apply -> revisions reaching DEPLOYED -> verify");
    const applied = await runApply(
      dir,
      { target: [], wait: true, timeout: 10 * 60_000, concurrency: 8, yes: true, output: "text" },
      { stdout: io.stdout, stderr: io.stderr, env },
    );
    if (applied !== 0) {
      say(c.red("apply did not converge; see above"));
      return applied;
    }
    if (options.once) {
      step("Done (--once): the control plane now matches the manifests");
      return 0;
    }

    step("Controller: watching the directory, reconciling every change");
    const logger = createLogger({ level: "info" }, humanLog(io.stdout, color));
    controller = await startController({
      source: { kind: "dir", dir },
      api: { apiUrl: controlPlane.url, apiKey: DEFAULT_API_KEY, platformUrl: controlPlane.url },
      listen: { host: "127.0.0.1", port: 0 },
      selfHeal: true,
      driftSchedule: "*/1 * * * *",
      concurrency: 8,
      debounceMs: 200,
      backoffBaseMs: 2_000,
      backoffMaxMs: 60_000,
      timeoutMs: 10 * 60_000,
      pollIntervalMs: 250,
      maxPollIntervalMs: 1_000,
      env,
      logger,
    });
    const file = resolve(dir, "triage-agent.yaml");
    say("");
    say(c.bold("Try it: edit a manifest and save, e.g."));
    say(`  ${file}`);
    say("  change image_uri's tag (2.3.1 -> 2.3.2): the controller reconciles only that deployment.");
    say(`Metrics: ${controller.url}/metrics   status: ${controller.url}/status`);
    say("Drift is checked every minute and healed back to the manifests. Press Ctrl-C to stop.");
    io.onWatching?.({ dir, controller });
    await (io.stopSignal ?? signalled());
    step("Stopping");
    return 0;
  } finally {
    await controller?.stop(5_000);
    await controlPlane.stop();
    await rm(dir, { recursive: true, force: true });
    say("Stopped cleanly.");
  }
}

/** internal_source deployments build from an uploaded tarball; without one the revision fails, so the demo leaves them out. */
async function dropTarballSources(dir: string): Promise<string[]> {
  const dropped: string[] = [];
  for (const name of await readdir(dir)) {
    if (!/\.ya?ml$/.test(name)) continue;
    const text = await readFile(join(dir, name), "utf8");
    if (/^\s*source:\s*internal_source\s*$/m.test(text) && !/source_tarball_path/.test(text)) {
      await rm(join(dir, name));
      dropped.push(name);
    }
  }
  return dropped;
}

const signalled = () =>
  new Promise<void>((resolveSignal) => {
    process.once("SIGINT", () => resolveSignal());
    process.once("SIGTERM", () => resolveSignal());
  });

export function demoCommand(): Command {
  return new Command("demo")
    .description("Try plumb: local control plane + the example manifests + the controller (npm start)")
    .option("--once", "stop after the first apply (smoke test)")
    .option("--revision-seconds <s>", "seconds per revision state of the local control plane", "1")
    .action(async (flags: { once?: boolean; revisionSeconds: string }) => {
      const revisionSeconds = Number(flags.revisionSeconds);
      if (!Number.isFinite(revisionSeconds) || revisionSeconds < 0)
        throw new PlumbError("usage", "--revision-seconds must be a number >= 0", { exitCode: 64 });
      process.exitCode = await runDemo(
        { stdout: process.stdout, stderr: process.stderr, env: process.env },
        { once: Boolean(flags.once), revisionSeconds },
      );
    });
}
