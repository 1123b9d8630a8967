import type { DeploymentSource, SourceConfig, SecretReference } from "../../schema/deployment.js";
import { badRequest } from "../http/http-errors.js";
import type { Integration, Listener } from "../options.js";
import type { DeploymentRecord } from "./record.js";
import { given } from "./source-fields.js";

// Business rules that depend on stored state or on the installation: 400 {"detail"} (decisions.md).
// Here what a create and a patch share; their own rules are create-rules.ts and patch-rules.ts.

export type RuleEnv = { mode: "saas" | "self-hosted"; listeners: Listener[]; integrations: Integration[] };

/**
 * spec 2.1/4.1: secret_references is "array of SecretReference or null", "only applicable for
 * external_container". An empty list references nothing, so it applies to no source in particular:
 * accepted on every source, as null is (docs/control-plane.md "Deployments").
 */
export const referencesSome = (refs: SecretReference[] | null | undefined): refs is SecretReference[] =>
  given(refs) && refs.length > 0;

/**
 * Spec 2.2: listener_config is "validated by the compute type of the listener", and k8s_namespace
 * "applies only to listeners of compute type k8s". A namespace for a listener of another type is
 * refused (400: it depends on the installation's listeners), naming the listener and its type.
 */
export function checkListenerConfig(
  listenerConfig: SourceConfig["listener_config"],
  listenerId: string | null | undefined,
  env: RuleEnv,
): void {
  if (!given(listenerConfig?.k8s_namespace) || !given(listenerId)) return;
  const listener = env.listeners.find((l) => l.id === listenerId);
  if (listener === undefined || listener.compute_type === "k8s") return;
  throw badRequest(
    `source_config.listener_config.k8s_namespace applies only to listeners of compute type k8s; listener ${listener.id} has compute type ${listener.compute_type}`,
  );
}

export type CreatePlan = Pick<
  DeploymentRecord,
  "sourceConfig" | "sourceRevisionConfig" | "secretNames" | "secretReferences"
>;

/**
 * The hosted service's deploy CLI sends `deployment_type` for internal_source too, and the hosted
 * service accepts it there with no effect (docs/control-plane.md "Accepted without effect").
 */
export function withoutIgnoredFields(config: SourceConfig, source: DeploymentSource): SourceConfig {
  if (source !== "internal_source" || !given(config.deployment_type)) return config;
  const { deployment_type: _ignored, ...rest } = config;
  return rest;
}
