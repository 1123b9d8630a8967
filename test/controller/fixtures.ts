import type { DesiredSnapshot } from "../../src/controller/snapshot/desired.js";
import { buildSnapshot } from "../../src/controller/snapshot/desired.js";
import type { LoadedManifest, Problem } from "../../src/manifest/types.js";
import type { ObjectStatus } from "../../src/status/status-types.js";
import { container } from "./support.js";

// In-memory inputs for the controller's pure parts (no files, no server).

const at = { file: "", line: 1, column: 1 };

export function loaded(file: string, name: string, image = `img/${name}:1`): LoadedManifest {
  return {
    manifest: container(name, image) as unknown as LoadedManifest["manifest"],
    file,
    location: { ...at, file },
    locate: () => ({ ...at, file }),
  };
}

export const problem = (file: string, line: number, message: string): Problem => ({
  file,
  line,
  column: 3,
  severity: "error",
  code: "unknown-field",
  field: "spec.x",
  message,
});

export const snapshotOf = (manifests: LoadedManifest[], problems: Problem[] = []): DesiredSnapshot =>
  buildSnapshot({ manifests, problems });

export const status = (name: string, extra: Partial<ObjectStatus> = {}): ObjectStatus => ({
  kind: "Deployment",
  name,
  id: `id-${name}`,
  latest_revision_id: `rev-${name}`,
  active_revision_id: `rev-${name}`,
  revision_status: "DEPLOYED",
  sync: "Synced",
  health: "Healthy",
  git_commit: null,
  manifest_digest: null,
  secret_fingerprints: null,
  updated_at: "2026-01-01T00:00:00.000Z",
  last_error: null,
  ...extra,
});
