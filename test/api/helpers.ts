import nock from "nock";
import { afterEach, beforeAll, afterAll, expect } from "vitest";
import type { Clock } from "../../src/clock.js";
import type { Deployment } from "../../src/schema/deployment.js";

/** A clock whose sleeps return on the next turn of the event loop and move time forward; records them. */
export function fakeClock(start = 1_700_000_000_000): Clock & { sleeps: number[] } {
  let now = start;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    sleep: async (ms, signal) => {
      if (signal?.aborted) throw signal.reason;
      sleeps.push(ms);
      await new Promise((resolve) => setImmediate(resolve)); // let callers already woken run first
      now += ms;
    },
  };
}

/** Strict nock: no real network, and every interceptor a test declares must be used. */
export function useStrictNock(): void {
  beforeAll(() => nock.disableNetConnect());
  afterEach(() => {
    const pending = nock.pendingMocks();
    nock.cleanAll();
    expect(pending).toEqual([]);
  });
  afterAll(() => nock.enableNetConnect());
}

export const BASE = "http://cp.test";
export const KEY = "test-key-0123456789abcdef";

let counter = 0;
export function deployment(name: string, extra: Partial<Deployment> = {}): Deployment {
  counter += 1;
  const id = `00000000-0000-4000-8000-${String(counter).padStart(12, "0")}`;
  return {
    id,
    tenant_id: "00000000-0000-4000-8000-000000000000",
    name,
    source: "external_container",
    source_config: { custom_url: null },
    source_revision_config: { image_uri: "registry.test/app:1" },
    secrets: [],
    created_at: "2025-01-01T00:00:00Z",
    updated_at: "2025-01-01T00:00:00Z",
    status: "READY",
    latest_revision_id: null,
    active_revision_id: null,
    ...extra,
  };
}
