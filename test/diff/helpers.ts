import type { DesiredObject } from "../../src/diff/plan/build-plan.js";
import type { LoadedManifest } from "../../src/manifest/types.js";
import type { Deployment } from "../../src/schema/deployment.js";
import type { DeploymentSpec, OrganizationAccessSpec } from "../../src/schema/manifest.js";

/** An in-memory manifest whose fields all sit on line 1 + their depth (enough to check file:line). */
function loadedDeployment(
  name: string,
  spec: DeploymentSpec,
  file = `deployments/${name}.yaml`,
): LoadedManifest {
  return {
    manifest: { apiVersion: "plumb/v1", kind: "Deployment", metadata: { name }, spec },
    file,
    location: { file, line: 1, column: 1 },
    locate: (path) => ({ file, line: path.length + 1, column: 1 }),
  };
}

export function loadedAccess(spec: OrganizationAccessSpec, name = "access"): LoadedManifest {
  const file = "org/access.yaml";
  return {
    manifest: { apiVersion: "plumb/v1", kind: "OrganizationAccess", metadata: { name }, spec },
    file,
    location: { file, line: 1, column: 1 },
    locate: () => ({ file, line: 1, column: 1 }),
  };
}

/** A desired deployment with literal secret values resolved the way loadSecretValues does. */
export function desiredDeployment(name: string, spec: DeploymentSpec): DesiredObject {
  const secrets = spec.secrets?.map((s) => ({ name: s.name, value: s.value ?? "" }));
  return { loaded: loadedDeployment(name, spec), ...(secrets ? { secrets } : {}) };
}

let counter = 0;
/** A live deployment as the API returns it (masked secrets, read-only fields filled). */
export function liveDeployment(
  fields: Pick<Deployment, "name" | "source"> & Partial<Deployment>,
): Deployment {
  counter += 1;
  const id = `00000000-0000-4000-8000-${String(counter).padStart(12, "0")}`;
  return {
    id,
    tenant_id: "11111111-1111-4111-8111-111111111111",
    source_config: {},
    source_revision_config: {},
    secrets: [],
    created_at: "2025-01-01T00:00:00Z",
    updated_at: "2025-01-01T00:00:00Z",
    status: "READY",
    latest_revision_id: "r1",
    active_revision_id: "r1",
    ...fields,
  };
}
