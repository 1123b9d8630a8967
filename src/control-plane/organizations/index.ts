import type { FastifyInstance } from "fastify";
import type { ControlPlaneContext, StatefulModule } from "../context.js";
import { registerOrganizationRoutes } from "./routes.js";
import { createOrganizationStore } from "./store.js";

export type OrganizationsOptions = {
  /** Self-hosted only: false turns JIT provisioning off for every organization (spec 5.4 rule 6). */
  selfHostedJitProvisioningEnabled: boolean;
};

/**
 * Reads SELF_HOSTED_JIT_PROVISIONING_ENABLED: only the value "false" (any case) disables JIT.
 * Called once at the edge (src/cli/control-plane/control-plane.ts), never by the module itself.
 */
export function organizationsOptionsFromEnv(env: NodeJS.ProcessEnv): OrganizationsOptions {
  return {
    selfHostedJitProvisioningEnabled:
      env.SELF_HOSTED_JIT_PROVISIONING_ENABLED?.trim().toLowerCase() !== "false",
  };
}

/**
 * Organization access of the platform API: settings (spec 2.7, 4.3), invites, default SSO settings,
 * SCIM-provisioned users, members and the SSO sign-in decision (spec 3.4), one organization per tenant.
 * Options come from the caller (ControlPlaneOptions); the module does not read the environment.
 */
export function createOrganizationsModule(
  ctx: ControlPlaneContext,
  options: OrganizationsOptions,
): {
  register(app: FastifyInstance): void;
  state: StatefulModule;
} {
  const store = createOrganizationStore();
  return {
    register: (app) => registerOrganizationRoutes(app, { ctx, store, ...options }),
    state: {
      name: "organizations",
      snapshot: () => store.snapshot(),
      restore: (data) => store.restore(data),
    },
  };
}
