import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

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

/**
 * The port of a controller spawned with `--listen 127.0.0.1:0`, read from its first log line with a
 * `url` (it logs `listening` as soon as it binds). A port picked up front (freePort) can be taken
 * by any other socket of a busy run before the child binds it; port 0 cannot. Fails with what the
 * child printed and how it ended, should it exit or stay silent.
 */
export async function listeningPort(run: CliRun, timeoutMs = 20_000): Promise<number> {
  const found = () => /"url":"http:\/\/127\.0\.0\.1:(\d+)"/.exec(run.output())?.[1];
  const deadline = Date.now() + timeoutMs;
  for (let delay = 5; ; delay = Math.min(delay * 2, 100)) {
    const port = found();
    if (port) return Number(port);
    const ended = run.child.exitCode ?? run.child.signalCode;
    if (ended !== null || Date.now() > deadline)
      throw new Error(
        `controller ${ended === null ? `did not listen within ${timeoutMs} ms` : `exited (${ended}) before listening`}; its last lines:\n${run.output().trimEnd().split("\n").slice(-8).join("\n")}`,
      );
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

/**
 * The built CLI with a file-size limit (`ulimit -f KIB`): a write past it fails with EFBIG, as a
 * full disk fails one with ENOSPC (the limit is a process's, so the CLI runs in a child).
 * Rejects as execFile does when the CLI exits non-zero (`code`, and its output in the message).
 */
export function runCliWithFileLimit(kib: number, args: string[], env: NodeJS.ProcessEnv) {
  return promisify(execFile)(
    "bash",
    ["-c", `ulimit -f ${kib} && exec "$@"`, "bash", process.execPath, MAIN, ...args],
    {
      env: { ...process.env, NO_COLOR: "1", ...env },
    },
  );
}
