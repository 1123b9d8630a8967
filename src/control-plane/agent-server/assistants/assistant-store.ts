import { createHash } from "node:crypto";
import { canonicalUuid } from "../../http/uuid.js";
import { GRAPH_ID } from "../graph.js";

/**
 * Assistants of each deployment: the system assistant of the graph (always there, id derived
 * from the graph name as the open-source server derives it) and the ones clients create.
 */

export type AssistantRecord = {
  assistant_id: string;
  graph_id: string;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
  metadata: Record<string, unknown>;
  name: string;
  description: string | null;
  version: number;
  created_at: string;
  updated_at: string;
  /** Every version kept (assistant-versions.ts); absent in records saved before versions were kept. */
  versions?: Array<Omit<AssistantRecord, "updated_at" | "versions">>;
};

/** RFC 4122 name-based UUID (SHA-1, version 5). */
export function uuid5(name: string, namespace: string): string {
  const bytes = createHash("sha1")
    .update(Buffer.from(namespace.replaceAll("-", ""), "hex"))
    .update(name, "utf8")
    .digest()
    .subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The open-source server's namespace for graph assistants: "agent" gets fe096781-5601-53d2-... */
const GRAPH_NAMESPACE = "6ba7b821-9dad-11d1-80b4-00c04fd430c8";
export const SYSTEM_ASSISTANT_ID = uuid5(GRAPH_ID, GRAPH_NAMESPACE);

/** When the system assistant claims to have been created: fixed, so its record never changes. */
const SYSTEM_CREATED_AT = "2025-01-01T00:00:00.000Z";

const systemAssistant = (): AssistantRecord => ({
  assistant_id: SYSTEM_ASSISTANT_ID,
  graph_id: GRAPH_ID,
  config: {},
  context: {},
  metadata: { created_by: "system" },
  name: GRAPH_ID,
  description: null,
  version: 1,
  created_at: SYSTEM_CREATED_AT,
  updated_at: SYSTEM_CREATED_AT,
});

export type AssistantStore = {
  /** An assistant by id, or the system assistant by its graph's name. */
  resolve(deploymentId: string, idOrGraph: string): AssistantRecord | undefined;
  /** Every assistant of the deployment, the system one first. */
  list(deploymentId: string): AssistantRecord[];
  put(deploymentId: string, assistant: AssistantRecord): void;
  delete(deploymentId: string, assistantId: string): void;
  snapshot(): Record<string, AssistantRecord[]>;
  restore(data: Record<string, AssistantRecord[]>): void;
};

export function createAssistantStore(): AssistantStore {
  let byDeployment = new Map<string, Map<string, AssistantRecord>>();
  const system = systemAssistant();
  const own = (deploymentId: string) => {
    let assistants = byDeployment.get(deploymentId);
    if (assistants === undefined)
      byDeployment.set(deploymentId, (assistants = new Map<string, AssistantRecord>()));
    return assistants;
  };
  return {
    resolve(deploymentId, idOrGraph) {
      const id = canonicalUuid(idOrGraph) ?? idOrGraph.toLowerCase(); // any spelling of a uuid
      if (idOrGraph === GRAPH_ID || id === SYSTEM_ASSISTANT_ID) return system;
      return byDeployment.get(deploymentId)?.get(id);
    },
    list: (deploymentId) => [system, ...(byDeployment.get(deploymentId)?.values() ?? [])],
    put: (deploymentId, assistant) => void own(deploymentId).set(assistant.assistant_id, assistant),
    delete: (deploymentId, assistantId) => void byDeployment.get(deploymentId)?.delete(assistantId),
    snapshot: () =>
      Object.fromEntries([...byDeployment].map(([id, assistants]) => [id, [...assistants.values()]])),
    restore(data) {
      byDeployment = new Map(
        Object.entries(data).map(([id, list]) => [id, new Map(list.map((a) => [a.assistant_id, a]))]),
      );
    },
  };
}
