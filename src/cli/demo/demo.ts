import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { useColor } from "../color.js";
import type { Controller } from "../../controller/controller.js";
import { PlumbError } from "../../errors.js";
import { copyExamples } from "./demo-examples.js";
import { demoEnv, startDemoPlanes, stopDemoPlanes } from "./demo-planes.js";
import { startDemoController } from "./demo-controller.js";
import type { DemoIo } from "./demo-io.js";
import { introduceManifests, introducePlanes, narrator, showWatching } from "./demo-narrator.js";
import { applyAndPromote } from "./demo-steps.js";

export type { DemoIo } from "./demo-io.js";

// `plumb demo` (npm start): two local control planes in this process (hosted: staging and prod;
// self-hosted: onprem), the examples repository in a temporary directory, apply to staging and
// onprem, then prod, then the controller watching the directory until Ctrl-C.

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
