import { vi } from "vitest";
import { main } from "../../src/cli/main.js";

// `plumb ARGS` called in the test's own process, for cases where a child process adds nothing but
// its start-up (the exit code is main()'s return, the message what it writes). stdout, stderr,
// the environment and process.exitCode are process-wide: run these one at a time. Whatever goes
// straight to file descriptor 1 (pino's default destination) is not captured.

export async function runInProcess(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; output: string }> {
  let output = "";
  const capture = (chunk: string | Uint8Array) => {
    output += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    return true;
  };
  const stdout = vi.spyOn(process.stdout, "write").mockImplementation(capture);
  const stderr = vi.spyOn(process.stderr, "write").mockImplementation(capture);
  // `plumb controller` restarts itself in place with heap flags where Node has process.execve
  // (22.15+, 24): in-process that would replace the test worker. Flags the user already gives
  // are not added again, so these say there is nothing to add (cli/heap-tuning.ts).
  const heapFlags =
    args[0] === "controller"
      ? {
          NODE_OPTIONS:
            "--max-semi-space-size=4 --max-old-space-size=4096 --optimize-for-size --liftoff-only",
        }
      : {};
  for (const [name, value] of Object.entries({ NO_COLOR: "1", ...heapFlags, ...env }))
    vi.stubEnv(name, value);
  // Put back as found: a file before this one in the worker may have left 0 (isolate: false).
  const exitCodeBefore = process.exitCode;
  process.exitCode = undefined;
  try {
    const code = await main([process.execPath, "plumb", ...args]);
    return { code, output };
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
    vi.unstubAllEnvs();
    process.exitCode = exitCodeBefore;
  }
}
