import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import type { ApplyIo } from "../../src/cli/sync/apply.js";

export type Captured = ApplyIo & { out(): string; err(): string };

/**
 * Revision reads while an in-process apply waits: the first after 10-20 ms, then at most 200 ms
 * apart. The engine's own (the first read after 500-1,000 ms, up to 15 s apart) made each waiting
 * apply sit half a second or more on a revision the local control plane had already DEPLOYED; the
 * back-off itself is test/apply/revision-watcher*.test.ts's to prove.
 */
export const TEST_POLL = { pollIntervalMs: 20, maxPollIntervalMs: 200 };

/** In-memory stdout/stderr and an environment pointing at the local control plane. */
export function captureIo(cp: RunningControlPlane, extra: Partial<ApplyIo> = {}): Captured {
  let out = "";
  let err = "";
  return {
    stdout: { write: (t: string) => (out += t), isTTY: false },
    stderr: { write: (t: string) => (err += t) },
    stdin: { isTTY: false },
    env: { PLUMB_API_URL: cp.url, PLUMB_API_KEY: DEFAULT_API_KEY, NO_COLOR: "1" },
    signals: { once: () => process, removeListener: () => process },
    poll: TEST_POLL,
    ...extra,
    out: () => out,
    err: () => err,
  };
}

export async function startPlane(options: Parameters<typeof startControlPlane>[0] = {}) {
  const cp = await startControlPlane({
    revisionSeconds: 0,
    deploymentReadySeconds: 0,
    runSeconds: 0,
    ...options,
  });
  const root = await mkdtemp(join(tmpdir(), "plumb-cli-"));
  return { cp, root };
}

export const applyFlags = (over: Record<string, unknown> = {}) => ({
  target: [] as string[],
  wait: true,
  timeout: 60_000,
  concurrency: 8,
  yes: true,
  output: "text" as "text" | "json",
  ...over,
});
