import { DEFAULT_API_KEY } from "../src/control-plane/options.js";
import type { ApplyIo } from "../src/cli/sync/apply.js";

// What the chaos benches share (bench/chaos-*.bench.ts): a seeded generator, so a failing run can be
// replayed with its seed (PLUMB_CHAOS_SEED), and the control plane's view of a deployment.

/** mulberry32: a small seeded generator. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** PLUMB_CHAOS_EVENTS (default 200) and PLUMB_CHAOS_SEED (default random). */
export function chaosSettings(): { events: number; seed: number } {
  return {
    events: Number(process.env.PLUMB_CHAOS_EVENTS ?? 200),
    seed: Number(process.env.PLUMB_CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31)),
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A CLI command's io in memory: output kept (for a violation's message), the local control plane's env. */
export function memoryIo(url: string, env: Record<string, string> = {}): ApplyIo & { out(): string } {
  let out = "";
  return {
    stdout: { write: (t: string) => (out += t), isTTY: false },
    stderr: { write: (t: string) => (out += t) },
    stdin: { isTTY: false },
    env: { PLUMB_API_URL: url, PLUMB_API_KEY: DEFAULT_API_KEY, NO_COLOR: "1", ...env },
    signals: { once: () => process, removeListener: () => process },
    out: () => out,
  };
}

type Revision = { source_revision_config?: { image_uri?: string } };
type Deployment = { id: string; name: string; source_revision_config?: { image_uri?: string } };

/** Minimal reads of the local control plane, for the invariants. */
export function controlPlane(url: string) {
  const get = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${url}${path}`, { headers: { "x-api-key": DEFAULT_API_KEY } });
    if (!res.ok) throw new Error(`GET ${path}: ${res.status}`);
    return (await res.json()) as T;
  };
  const call = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { "x-api-key": DEFAULT_API_KEY, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  };
  const deployments = async () =>
    (await get<{ resources: Deployment[] }>("/v2/deployments?limit=100")).resources;
  return {
    call,
    deployments,
    /** Images of a deployment's revisions, oldest first (the API lists newest first). */
    images: async (id: string) =>
      (await get<{ resources: Revision[] }>(`/v2/deployments/${id}/revisions?limit=100`)).resources
        .reverse()
        .map((r) => r.source_revision_config?.image_uri ?? ""),
  };
}
