import { Client } from "@langchain/langgraph-sdk";
import { expect } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { startControlPlane } from "../../src/control-plane/server.js";
import { createAgentDeployment, gatedClock } from "../control-plane/agent-server/test-context.js";

/**
 * What the SDK conformance suite runs against: an agent server URL, and a way to hold runs in
 * progress until the test lets them finish. The default is `plumb control-plane` started in
 * process with a gated clock (a run ends only when the test releases it: no sleeps). With
 * CONFORMANCE_URL set, the suite targets that server instead (e.g. the open-source dev server
 * serving test/conformance/oss); runs there end on their own after CONFORMANCE_RUN_MS.
 */
export type ConformanceTarget = {
  name: string;
  client(): Client;
  /** Resolves once `count` runs are in progress and held. */
  untilHeld(count: number): Promise<void>;
  /** Lets every held run finish. */
  release(): void;
  /**
   * What `multitask_strategy: "reject"` answers on a busy thread: 409 on plumb, 422 on the
   * open-source server (docs/control-plane.md "Where we differ").
   */
  rejectStatus: number;
  /** Status of a run cancelled because its client disconnected: interrupted here, error there. */
  cancelledStatus: string;
  /** What GET answers for a run another run rolled back: 404 here (deleted), its status there. */
  rolledBackRun: number | string;
  /** The state at a checkpoint the thread never had: 404 here, an empty state there. */
  unknownCheckpoint: 404 | "empty state";
  /**
   * Whether a run interrupted just after it started may end before its first values event: the
   * open-source server's runs are "held" by a pause of 300 ms, which on a busy machine is before
   * the run streams anything; plumb's are held by its clock, after that event.
   */
  mayEndBeforeValues: boolean;
  /** How long a run may take to end once released (polls wait this long). */
  settleMs: number;
  stop(): Promise<void>;
};

/** True when the suite runs against another server (CONFORMANCE_URL, e.g. the open-source one). */
const external = process.env.CONFORMANCE_URL !== undefined && process.env.CONFORMANCE_URL !== "";

/**
 * Calls the open-source agent server (@langchain/langgraph-api 2.0.0) does not serve, each with
 * the reason; their checks are skipped there (docs/control-plane.md "Where we differ").
 */
const OSS_LACKS: Record<"crons" | "threadStream" | "patchState" | "beforeConfig", string> = {
  crons: "the dev server answers crons 400/404; plumb serves the hosted service's crons API",
  threadStream: "GET /threads/{tid}/stream is served by the hosted (Python) server only: 404 there",
  patchState:
    "PATCH /threads/{tid}/state (threads.patchState) is served by the hosted server only: 404 there",
  beforeConfig:
    "history's `before` as a config object (the SDK's type) is refused (400): it takes an id string",
};

/**
 * How long the schemas check may take: the open-source server compiles the graph with TypeScript
 * to extract them (23 s to over 30 s on the shared 2-core machine); plumb's the usual 30 s.
 */
export const slowSchemasMs = external ? 120_000 : 30_000;

/** Whether the target lacks a call: skip its check (the reason is in OSS_LACKS). */
export const lacks = (call: keyof typeof OSS_LACKS): boolean => external && OSS_LACKS[call].length > 0;

export async function startTarget(): Promise<ConformanceTarget> {
  if (external) return externalTarget(process.env.CONFORMANCE_URL!);
  const clock = gatedClock();
  const cp = await startControlPlane({ clock, runSeconds: 5, revisionSeconds: 0, deploymentReadySeconds: 0 });
  const id = await createAgentDeployment(cp.url, "conformance");
  return {
    name: "plumb control-plane",
    client: () =>
      new Client({
        apiUrl: `${cp.url}/agents/${id}`,
        apiKey: DEFAULT_API_KEY,
        callerOptions: { maxRetries: 0 },
      }),
    untilHeld: async (count) => expect.poll(() => clock.waiting(), { timeout: 5000 }).toBe(count),
    release: () => clock.release(),
    rejectStatus: 409,
    mayEndBeforeValues: false,
    cancelledStatus: "interrupted",
    rolledBackRun: 404,
    unknownCheckpoint: 404,
    settleMs: 5000,
    stop: () => cp.stop(),
  };
}

function externalTarget(apiUrl: string): ConformanceTarget {
  const runMs = Number(process.env.CONFORMANCE_RUN_MS ?? 1500);
  return {
    name: apiUrl,
    client: () => new Client({ apiUrl, callerOptions: { maxRetries: 0 } }),
    // Runs there are slow on their own; give a started run a moment to be picked up.
    untilHeld: () => new Promise((resolve) => setTimeout(resolve, Math.min(300, runMs / 4))),
    release: () => undefined,
    rejectStatus: 422,
    mayEndBeforeValues: true,
    cancelledStatus: "error",
    rolledBackRun: "error",
    unknownCheckpoint: "empty state",
    settleMs: runMs * 4 + 5000,
    stop: async () => undefined,
  };
}
