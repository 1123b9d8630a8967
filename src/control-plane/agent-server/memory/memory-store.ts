import { isRecord, readPerDeployment } from "../threads/snapshot-read.js";

/**
 * The agent server's long-term memory store (SDK client.store): JSON items under a namespace
 * (a list of labels) and a key, per deployment, so per tenant. Kept with --data as the threads
 * are. Bounded: STORE_LIMITS caps each item and each deployment's store.
 */

export type StoreItem = {
  namespace: string[];
  key: string;
  value: Record<string, unknown>;
  created_at: string;
  updated_at: string;
};

export const STORE_LIMITS = {
  labels: 10,
  labelChars: 256,
  keyChars: 1024,
  valueBytes: 64 * 1024,
  itemsPerDeployment: 10_000,
} as const;

export type MemoryStore = {
  get(deploymentId: string, namespace: readonly string[], key: string): StoreItem | undefined;
  /** "full" when the deployment already holds the most items a store may hold. */
  put(deploymentId: string, item: Omit<StoreItem, "created_at">): "stored" | "full";
  delete(deploymentId: string, namespace: readonly string[], key: string): void;
  list(deploymentId: string): StoreItem[];
  snapshot(): Record<string, StoreItem[]>;
  restore(data: Record<string, StoreItem[]>): void;
};

/** Labels cannot hold "." (the SDK refuses them), so joining with it is unambiguous. */
const idOf = (namespace: readonly string[], key: string) => JSON.stringify([namespace.join("."), key]);

export function createMemoryStore(): MemoryStore {
  let byDeployment = new Map<string, Map<string, StoreItem>>();
  const own = (deploymentId: string) => {
    let items = byDeployment.get(deploymentId);
    if (items === undefined) byDeployment.set(deploymentId, (items = new Map<string, StoreItem>()));
    return items;
  };
  return {
    get: (deploymentId, namespace, key) => byDeployment.get(deploymentId)?.get(idOf(namespace, key)),
    put(deploymentId, item) {
      const items = own(deploymentId);
      const id = idOf(item.namespace, item.key);
      const existing = items.get(id);
      if (existing === undefined && items.size >= STORE_LIMITS.itemsPerDeployment) return "full";
      items.set(id, { ...item, created_at: existing?.created_at ?? item.updated_at });
      return "stored";
    },
    delete: (deploymentId, namespace, key) =>
      void byDeployment.get(deploymentId)?.delete(idOf(namespace, key)),
    list: (deploymentId) => [...(byDeployment.get(deploymentId)?.values() ?? [])],
    snapshot: () =>
      JSON.parse(
        JSON.stringify(Object.fromEntries([...byDeployment].map(([id, items]) => [id, [...items.values()]]))),
      ) as Record<string, StoreItem[]>,
    restore(data) {
      byDeployment = new Map(
        Object.entries(data).map(([id, list]) => [
          id,
          new Map(list.map((item) => [idOf(item.namespace, item.key), item])),
        ]),
      );
    },
  };
}

/** The store items of a snapshot (absent in snapshots written before the store existed). */
export function readStoreItems(data: unknown): Record<string, StoreItem[]> {
  return readPerDeployment<StoreItem>(
    data,
    "store",
    "store items",
    (item) =>
      isRecord(item) && Array.isArray(item.namespace) && typeof item.key === "string" && isRecord(item.value),
  );
}
