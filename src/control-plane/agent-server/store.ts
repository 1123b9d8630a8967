import { PlumbError } from "../../errors.js";
import type { AssistantRecord } from "./assistants/assistant-store.js";
import { isRecord, readPerDeployment } from "./threads/snapshot-read.js";
import type { ThreadRecord } from "./types.js";

/**
 * Persisted form of the agent server: threads (with their runs and messages) per deployment, and
 * the assistants clients created (absent in snapshots written before assistants existed).
 */
type AgentServerSnapshot = {
  version: 1;
  deployments: Record<string, ThreadRecord[]>;
  assistants?: Record<string, AssistantRecord[]>;
  /** Items of the store API (memory-store.ts; absent in snapshots written before it existed). */
  store?: Record<string, unknown[]>;
};

export type ThreadStore = {
  get(deploymentId: string, threadId: string): ThreadRecord | undefined;
  put(deploymentId: string, thread: ThreadRecord): void;
  delete(deploymentId: string, threadId: string): void;
  /** Deletes a thread wherever it is (a stateless run's temporary thread). */
  remove(thread: ThreadRecord): void;
  deploymentOf(thread: ThreadRecord): string | undefined;
  list(deploymentId: string): ThreadRecord[];
  all(): ThreadRecord[];
  snapshot(): AgentServerSnapshot;
  restore(data: unknown): void;
};

function looksLikeThread(value: unknown): value is ThreadRecord {
  return (
    isRecord(value) &&
    typeof value.thread_id === "string" &&
    Array.isArray(value.messages) &&
    Array.isArray(value.runs)
  );
}

export function createThreadStore(): ThreadStore {
  let byDeployment = new Map<string, Map<string, ThreadRecord>>();

  const threadsOf = (deploymentId: string): Map<string, ThreadRecord> => {
    let threads = byDeployment.get(deploymentId);
    if (threads === undefined) {
      threads = new Map();
      byDeployment.set(deploymentId, threads);
    }
    return threads;
  };

  return {
    get: (deploymentId, threadId) => byDeployment.get(deploymentId)?.get(threadId),
    put: (deploymentId, thread) => void threadsOf(deploymentId).set(thread.thread_id, thread),
    delete: (deploymentId, threadId) => void byDeployment.get(deploymentId)?.delete(threadId),
    remove(thread) {
      for (const threads of byDeployment.values()) {
        if (threads.get(thread.thread_id) === thread) threads.delete(thread.thread_id);
      }
    },
    deploymentOf(thread) {
      for (const [deploymentId, threads] of byDeployment) {
        if (threads.get(thread.thread_id) === thread) return deploymentId;
      }
      return undefined;
    },
    list: (deploymentId) => [...(byDeployment.get(deploymentId)?.values() ?? [])],
    all: () => [...byDeployment.values()].flatMap((threads) => [...threads.values()]),
    snapshot: () => ({
      version: 1,
      // Deep copy through JSON: the snapshot must not alias live records the runs keep mutating.
      deployments: JSON.parse(
        JSON.stringify(
          Object.fromEntries([...byDeployment].map(([id, threads]) => [id, [...threads.values()]])),
        ),
      ) as Record<string, ThreadRecord[]>,
    }),
    restore: (data) => {
      const next = new Map<string, Map<string, ThreadRecord>>();
      if (data !== undefined && data !== null) {
        if (!isRecord(data) || data.version !== 1 || !isRecord(data.deployments)) {
          throw new PlumbError(
            "state-corrupt",
            "The agent-server part of the saved control-plane state is not readable (expected version 1); move the data directory aside to start empty.",
          );
        }
        for (const [deploymentId, threads] of Object.entries(data.deployments)) {
          if (!Array.isArray(threads) || !threads.every(looksLikeThread)) {
            throw new PlumbError(
              "state-corrupt",
              `The saved threads of deployment ${deploymentId} are not readable; move the data directory aside to start empty.`,
            );
          }
          next.set(deploymentId, new Map(threads.map((thread) => [thread.thread_id, thread])));
        }
      }
      byDeployment = next;
    },
  };
}

/** The assistants of a snapshot; checked like its threads, so a damaged file is reported, not half-loaded. */
export function readAssistants(data: unknown): Record<string, AssistantRecord[]> {
  return readPerDeployment<AssistantRecord>(
    data,
    "assistants",
    "assistants",
    (a) => isRecord(a) && typeof a.assistant_id === "string" && typeof a.graph_id === "string",
  );
}
