import type { ObjectStatus } from "../../src/status/status-store.js";

export const sampleStatus = (name: string, over: Partial<ObjectStatus> = {}): ObjectStatus => ({
  kind: "Deployment",
  name,
  id: "11111111-1111-4111-8111-111111111111",
  latest_revision_id: "r2",
  active_revision_id: "r2",
  revision_status: "DEPLOYED",
  sync: "Synced",
  health: "Healthy",
  git_commit: "abc123",
  manifest_digest: "sha256:00",
  secret_fingerprints: { salt: "s", values: { API_KEY: "scrypt$1024$8$1$abc" } },
  updated_at: "2026-01-01T00:00:00.000Z",
  last_error: null,
  ...over,
});
