import nock from "nock";
import { afterEach, beforeAll, afterAll, expect } from "vitest";
import type { Deployment } from "../../src/schema/deployment.js";

export { fakeClock } from "../support/fake-clock.js";

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
