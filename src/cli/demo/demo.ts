import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Command } from "commander";
import { createColors } from "picocolors";
import { readApiOptions } from "../../api/config.js";
import { useColor } from "../color.js";
import { type Controller, startController } from "../../controller/controller.js";
import { DEFAULT_API_KEY } from "../../control-plane/options.js";
import { PlumbError } from "../../errors.js";
import { createLogger } from "../../logger.js";
import { applyEnvironments } from "./demo-apply.js";
import { copyExamples } from "./demo-examples.js";
import { demoLogStream } from "./demo-log.js";
import { fetchMatrix, formatMatrix, waitSettled } from "./demo-matrix.js";
import { promoteToProd, skipSoak } from "./demo-promote.js";
import { settingsOf } from "../environments.js";
import { type DemoPlanes, demoEnv, startDemoPlanes, stopDemoPlanes } from "./demo-planes.js";

// `plumb demo` (npm start): two local control planes in this process (hosted: staging and prod;
// self-hosted: onprem), the examples repository in a temporary directory, apply to staging and
// onprem, then prod, then the controller watching the directory until Ctrl-C.

export type DemoIo = {
  stdout: { write(text: string): unknown; isTTY?: boolean };
  stderr: { write(text: string): unknown };
  env: NodeJS.ProcessEnv;
  /** Resolves when the demo should stop (default: SIGINT or SIGTERM, resolved with its name). */
  stopSignal?: Promise<NodeJS.Signals | void>;
  /** Awaited once the examples are copied, before the first apply (tests break a manifest there). */
  onCopied?: (dir: string) => Promise<void> | void;
  /** Awaited once every environment is applied, before the controller (tests count on the planes). */
  onApplied?: (info: { dir: string; planes: DemoPlanes }) => Promise<void> | void;
  /** Awaited as the demo stops, before its control planes do (tests count on them). */
  onStopping?: (planes: DemoPlanes) => Promise<void> | void;
  /** Called once the controller is watching (tests edit files then). */
  onWatching?: (info: { dir: string; controller: Controller }) => void;
};

export type DemoOptions = { once: boolean; revisionSeconds: number };

export async function runDemo(io: DemoIo, options: DemoOptions): Promise<number> {
  const color = useColor(io);
  const n = narrator(io, color);
  const { say, step, c } = n;
  say(c.bold("plumb demo: one repository of agent manifests, three environments, two control planes."));
  say(c.dim("Everything runs in this process on this machine; nothing is sent anywhere else."));
  const planes = await startDemoPlanes(options.revisionSeconds);
  const dir = await mkdtemp(join(tmpdir(), "plumb-demo-"));
  let controller: Controller | undefined;
  try {
    await copyExamples(dir);
    await io.onCopied?.(dir);
    const env = demoEnv(planes, io.env);
    const commandIo = { stdout: io.stdout, stderr: io.stderr, env };

    introducePlanes(n, planes, options.revisionSeconds);
    introduceManifests(n, dir);
    if (!(await applyAndPromote(n, dir, commandIo))) return 1;
    await io.onApplied?.({ dir, planes });
    if (options.once) {
      step("Done (--once): both control planes now match the manifests of their environments");
      return 0;
    }

    step("8. The controller: keeps the control planes matching the directory (`plumb controller`)");
    say("  It first checks every object once (all in sync after the apply), then reacts to saves.");
    controller = await startDemoController(dir, env, io.stdout, color);
    await showWatching(n, dir, controller);
    io.onWatching?.({ dir, controller });
    const signal = await (io.stopSignal ?? signalled());
    step("Stopping");
    // As every command: 130 after Ctrl-C, 143 after SIGTERM (README "Exit codes").
    return signal === "SIGINT" ? 130 : signal === "SIGTERM" ? 143 : 0;
  } finally {
    await controller?.stop(5_000);
    await io.onStopping?.(planes);
    await stopDemoPlanes(planes);
    await rm(dir, { recursive: true, force: true });
    say("Stopped cleanly.");
  }
}

const signalled = () =>
  new Promise<NodeJS.Signals>((resolveSignal) => {
    process.once("SIGINT", () => resolveSignal("SIGINT"));
    process.once("SIGTERM", () => resolveSignal("SIGTERM"));
  });

export function demoCommand(): Command {
  return new Command("demo")
    .description(
      "Try plumb: two local control planes, the examples' three environments, apply, the controller (npm start)",
    )
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

/** How the demo speaks: lines, numbered steps, and label/value rows in one column. */
type Narrator = ReturnType<typeof narrator>;

function narrator(io: DemoIo, color: boolean) {
  const c = createColors(color);
  const say = (text = "") => io.stdout.write(`${text}\n`);
  const step = (text: string) => say(`\n${c.bold(c.cyan(`==> ${text}`))}`);
  // One column for every label: the longest ("Status page") and two spaces.
  const row = (label: string, value: string, note = "") =>
    say(`  ${label.padEnd(13)}${value}${note ? `  ${c.dim(note)}` : ""}`);
  return { c, say, step, row };
}

function introducePlanes({ say, step, row }: Narrator, planes: DemoPlanes, revisionSeconds: number): void {
  step("1. Two local control planes, standing in for the hosted service and our own cluster");
  row("Hosted", planes.hosted.url, "SaaS mode: staging and prod (staging's names end in -staging)");
  row("Self-hosted", planes.selfHosted.url, "self-hosted mode: onprem");
  // plumb-local-key is the local servers' documented development key, not a credential.
  row("API key", DEFAULT_API_KEY, "both servers' built-in development key");
  row("Try", `curl -s -H 'X-Api-Key: ${DEFAULT_API_KEY}' ${planes.hosted.url}/v2/deployments`);
  say(`  In memory: everything is gone when the demo stops. Each revision moves one state every`);
  say(`  ${revisionSeconds}s until DEPLOYED, like a real build.`);
}

function introduceManifests({ say, step, row }: Narrator, dir: string): void {
  step("2. The manifests: a copy of examples/ you can edit freely");
  row("Dir", dir);
  row("Environments", "environments/staging.yaml, prod.yaml, onprem.yaml", "where each control plane is");
  say("  One file per agent. saas/support-agent.yaml says once what the agent is and, under");
  say("  `environments:`, only what differs: staging runs the release candidate refs/tags/v1.5.0,");
  say("  prod the release staging verified before. Secrets read from the environment get a fake");
  say(`  demo value; billing-agent's custom_url (an address in our cluster) is left out of the copy.`);
  say(`  \`plumb render ${dir} --env prod\` prints what prod gets.`);
}

/** What the demo says of each environment's first apply (steps 3 to 5, in promotion order). */
const FIRST_APPLY: Record<string, string> = {
  onprem: "the self-hosted agents, on the other control plane",
  staging: "create, wait for DEPLOYED, run the checks",
  prod: "the versions prod's overrides pin today",
};

/**
 * Steps 3 to 7: apply onprem, staging and prod in promotion order (as `plumb apply` runs them: the
 * first that does not converge stops the rest), promote staging's versions, apply prod again.
 */
async function applyAndPromote(
  { c, say, step }: Narrator,
  dir: string,
  commandIo: Parameters<typeof applyEnvironments>[2],
): Promise<boolean> {
  say(c.dim("\n  Each step is `plumb apply --env NAME --yes`: the plan first, then the requests, each new"));
  say(c.dim("  revision followed to DEPLOYED, then the agent's checks (verify) against its agent server."));
  say(c.dim("  Environments go in promotion order, and one that does not converge stops the others."));
  let number = 3;
  const first = await applyEnvironments(dir, Object.keys(FIRST_APPLY), commandIo, (name) =>
    step(`${number++}. apply --env ${name}: ${FIRST_APPLY[name] ?? ""}`),
  );
  if (first !== 0) {
    say(c.red("apply did not converge; see above"));
    return false;
  }

  step("6. promote --to prod: staging's checked versions into prod's overrides, once the gates hold");
  say("  environments/prod.yaml: promotion from staging when its revision is DEPLOYED (no drift,");
  say("  nothing pending), has soaked 30 minutes, and its checks passed (ratio 0.9, p95 2 s).");
  say();
  const blocked = await promoteToProd(dir, [], commandIo);
  say();
  say(
    blocked === 0
      ? c.yellow("  (the gates held already)")
      : "  Refused, as it should be: staging's revisions are seconds old. The demo's copy sets soak: 0s",
  );
  if (blocked !== 0) {
    say("  in environments/prod.yaml so that the other gates decide now:");
    await skipSoak(dir);
  }
  say();
  if ((await promoteToProd(dir, ["--write"], commandIo)) !== 0) {
    say(c.red("promote --to prod did not pass its gates; see above"));
    return false;
  }
  step("7. apply --env prod: the promoted versions, then prod's own checks");
  if ((await applyEnvironments(dir, ["prod"], commandIo)) !== 0) {
    say(c.red("apply --env prod did not converge; see above"));
    return false;
  }
  return true;
}

function startDemoController(
  dir: string,
  env: NodeJS.ProcessEnv,
  stdout: DemoIo["stdout"],
  color: boolean,
): Promise<Controller> {
  return startController({
    source: { kind: "dir", dir },
    // Unused: the tree defines environments, each with its own control plane.
    api: () => readApiOptions(env),
    // Each environment's api_url and api_key, read from the variables its Environment names.
    environmentApi: (environment, root) => {
      const settings = settingsOf(environment, root, env);
      return readApiOptions(settings.env, settings.flags);
    },
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
    logger: createLogger({ level: "info" }, demoLogStream(stdout, color)),
  });
}

/** Where to look while the controller watches, the matrix once settled, and what to try. */
async function showWatching({ c, say, row }: Narrator, dir: string, controller: Controller): Promise<void> {
  say();
  row("Watching", dir, "a save is reconciled about 200 ms later");
  row("Status page", `${controller.url}/`, "open in a browser: deployment × environment, live");
  row("Status", `${controller.url}/status`, "JSON: every object's sync, health, revision");
  row("Metrics", `${controller.url}/metrics`, "Prometheus");
  row("Drift", "checked every minute; changes made behind plumb's back are put back");
  say();
  if (controller.url && (await waitSettled(() => controller.status(), 3, 60_000))) {
    say(c.bold("Deployment × environment, as the status page shows it (each agent's version there):"));
    say(formatMatrix(await fetchMatrix(controller.url)));
    say();
  }
  say(c.bold("Try it:"));
  say(`  1. In ${resolve(dir, "saas", "support-agent.yaml")}`);
  say("     change LOG_LEVEL's value info to warning and save: prod's support-agent gets a new");
  say("     revision; staging's keeps its override's debug, so nothing is sent there.");
  say(`  2. In ${resolve(dir, "saas", "docs-agent", "src", "agent.ts")}`);
  say("     change anything and save: plumb packs and uploads the new source, one new revision");
  say("     in staging and one in prod.");
  say("  3. Break a manifest (e.g. misspell `spec`): it is reported with file:line and left alone");
  say("     while the others keep reconciling; fix it and it is reconciled again.");
  say(c.dim("  Press Ctrl-C to stop; the control planes, controller and temporary copy are removed."));
  say();
}
