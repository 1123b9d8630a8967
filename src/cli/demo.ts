import { existsSync } from "node:fs";
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Command } from "commander";
import { createColors } from "picocolors";
import { useColor } from "./color.js";
import { type Controller, startController } from "../controller/controller.js";
import { DEFAULT_API_KEY } from "../control-plane/options.js";
import { startControlPlane } from "../control-plane/server.js";
import { PlumbError } from "../errors.js";
import { createLogger } from "../logger.js";
import { runApply } from "./apply.js";
import { demoLogStream } from "./demo-log.js";

// `plumb demo` (npm start): a local control plane in this process, the SaaS examples in a temporary
// directory, apply with progress, then the controller watching the directory until Ctrl-C.

export type DemoIo = {
  stdout: { write(text: string): unknown; isTTY?: boolean };
  stderr: { write(text: string): unknown };
  env: NodeJS.ProcessEnv;
  /** Resolves when the demo should stop (default: SIGINT or SIGTERM, resolved with its name). */
  stopSignal?: Promise<NodeJS.Signals | void>;
  /** Called once the controller is watching (tests edit files then). */
  onWatching?: (info: { dir: string; controller: Controller }) => void;
};

export type DemoOptions = { once: boolean; revisionSeconds: number };

/** The examples shipped with plumb, from src/cli or dist/src/cli. */
function findExamples(): string {
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

export async function runDemo(io: DemoIo, options: DemoOptions): Promise<number> {
  const color = useColor(io);
  const c = createColors(color);
  const say = (text = "") => io.stdout.write(`${text}\n`);
  const step = (text: string) => say(`\n${c.bold(c.cyan(`==> ${text}`))}`);
  // One column for every label: the longest ("Status page") and two spaces.
  const row = (label: string, value: string, note = "") =>
    say(`  ${label.padEnd(13)}${value}${note ? `  ${c.dim(note)}` : ""}`);

  say(c.bold("plumb demo: deployment manifests in a directory, kept in step with a control plane."));
  say(c.dim("Everything runs in this process on this machine; nothing is sent anywhere else."));
  const controlPlane = await startControlPlane({
    port: 0,
    revisionSeconds: options.revisionSeconds,
    runSeconds: 0.5,
    deploymentReadySeconds: 0.5,
  });
  const dir = await mkdtemp(join(tmpdir(), "plumb-demo-"));
  let controller: Controller | undefined;
  try {
    const examples = findExamples();
    await cp(examples, dir, { recursive: true });
    await pointSchemaComments(dir, resolve(examples, "../../schemas"));
    // Demo values for the secrets the examples read from the environment; nothing real leaves this machine.
    const env: NodeJS.ProcessEnv = {
      ...io.env,
      OPENAI_API_KEY: "sk-demo-not-a-real-key",
      PLUMB_API_URL: controlPlane.url,
      PLUMB_API_KEY: DEFAULT_API_KEY,
      PLUMB_PLATFORM_URL: controlPlane.url,
    };
    delete env.PLUMB_TENANT_ID;

    step("1. A local control plane, standing in for the hosted API");
    row("URL", controlPlane.url, "in memory: everything is gone when the demo stops");
    // plumb-local-key is the local server's documented development key, not a credential.
    row("API key", DEFAULT_API_KEY, "the local server's built-in development key");
    row("Try", `curl -s -H 'X-Api-Key: ${DEFAULT_API_KEY}' ${controlPlane.url}/v2/deployments`);
    say(
      `  Each revision moves one state every ${options.revisionSeconds}s until DEPLOYED, like a real build.`,
    );

    step("2. The manifests: a copy of examples/saas you can edit freely");
    row("Dir", dir);
    say("  Deployments built from a container image, a git repository and an uploaded source");
    say("  directory, plus the organization's SSO settings. Secrets read from the environment get a");
    say("  fake demo value.");

    step("3. plan, then apply: create everything, wait for each revision to reach DEPLOYED, verify");
    say(c.dim("  The plan lists every change first; apply sends them, uploads docs-agent's source, and"));
    say(c.dim("  checks each agent answers. This is what `plumb plan` and `plumb apply --yes` do."));
    say();
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

    step("4. The controller: keeps the control plane matching the directory (`plumb controller`)");
    say("  It first checks every object once (all in sync after the apply), then reacts to saves.");
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
      logger: createLogger({ level: "info" }, demoLogStream(io.stdout, color)),
    });
    say();
    row("Watching", dir, "a save is reconciled about 200 ms later");
    row("Status page", `${controller.url}/`, "open in a browser: every object, live");
    row("Status", `${controller.url}/status`, "JSON: every object's sync, health, revision");
    row("Metrics", `${controller.url}/metrics`, "Prometheus");
    row("Drift", "checked every minute; changes made behind plumb's back are put back");
    say();
    say(c.bold("Try it:"));
    say(`  1. In ${resolve(dir, "triage-agent.yaml")}`);
    say("     change the image tag 2.3.1 to 2.3.2 and save: only triage-agent gets a new revision.");
    say(`  2. In ${resolve(dir, "docs-agent", "src", "agent.ts")}`);
    say("     change anything and save: plumb packs and uploads the new source, one new revision.");
    say("  3. Break a manifest (e.g. misspell `spec`): it is reported with file:line and left alone");
    say("     while the others keep reconciling; fix it and it is reconciled again.");
    say(c.dim("  Press Ctrl-C to stop; the control plane, controller and temporary copy are removed."));
    say();
    io.onWatching?.({ dir, controller });
    const signal = await (io.stopSignal ?? signalled());
    step("Stopping");
    // As every command: 130 after Ctrl-C, 143 after SIGTERM (README "Exit codes").
    return signal === "SIGINT" ? 130 : signal === "SIGTERM" ? 143 : 0;
  } finally {
    await controller?.stop(5_000);
    await controlPlane.stop();
    await rm(dir, { recursive: true, force: true });
    say("Stopped cleanly.");
  }
}

const signalled = () =>
  new Promise<NodeJS.Signals>((resolveSignal) => {
    process.once("SIGINT", () => resolveSignal("SIGINT"));
    process.once("SIGTERM", () => resolveSignal("SIGTERM"));
  });

/**
 * The examples' `# yaml-language-server: $schema=../../schemas/...` comments are relative to the
 * repository: in the temporary copy they point at plumb's schemas by absolute path instead, so an
 * editor opened on the copy still validates and completes.
 */
async function pointSchemaComments(dir: string, schemas: string): Promise<void> {
  for (const name of await readdir(dir)) {
    if (!name.endsWith(".yaml")) continue;
    const file = join(dir, name);
    const text = await readFile(file, "utf8");
    const pointed = text.replace(
      /^(# yaml-language-server: \$schema=)(?:\.\.\/)+schemas\/(\S+)$/m,
      (_all, prefix: string, schema: string) => `${prefix}${join(schemas, schema)}`,
    );
    if (pointed !== text) await writeFile(file, pointed);
  }
}

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
