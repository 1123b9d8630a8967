import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

// The built CLI as users run it (a real process: real exit codes, real SIGKILL), for e2e tests.

const MAIN = join(process.cwd(), "dist", "src", "cli", "main.js");

/**
 * dist/ is built once per run by vitest's globalSetup (test/global-setup.ts), before any test
 * file; this only checks it is there (a run that bypassed vitest.config.ts would not have it).
 */
export function assertBuilt(): void {
  if (!existsSync(MAIN)) {
    throw new Error(
      "dist/src/cli/main.js is missing: run the tests with vitest.config.ts (its globalSetup builds dist/)",
    );
  }
}

export type CliRun = {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
};

export function spawnCli(args: string[], env: NodeJS.ProcessEnv, cwd?: string): CliRun {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { ...process.env, NO_COLOR: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    ...(cwd ? { cwd } : {}),
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => out, exited };
}

/** Runs the CLI to its end: exit code and everything it printed. */
export async function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
): Promise<{ code: number | null; output: string }> {
  const run = spawnCli(args, env, cwd);
  const code = await run.exited;
  return { code, output: run.output() };
}
