import { randomUUID } from "node:crypto";
import { PlumbError } from "../../errors.js";
import type { OrgState } from "./types.js";

/** Persisted form: one organization per tenant, plus the creation counter. */
type OrganizationsSnapshot = { version: 1; next_seq: number; organizations: Record<string, OrgState> };

export type OrganizationStore = {
  /** The tenant's organization, created on first use (`created` tells the caller to persist it). */
  of(tenantId: string, now: string): { state: OrgState; created: boolean };
  /** Self-hosted: the default organization is the first one created (lowest `seq`). */
  isDefault(state: OrgState): boolean;
  snapshot(): OrganizationsSnapshot;
  restore(data: unknown): void;
};

const slug = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "") || "org";

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function looksLikeOrgState(value: unknown): value is OrgState {
  return (
    isRecord(value) &&
    isRecord(value.organization) &&
    typeof value.organization.seq === "number" &&
    isRecord(value.sso) &&
    Array.isArray(value.invites) &&
    Array.isArray(value.members)
  );
}

export function createOrganizationStore(): OrganizationStore {
  let organizations = new Map<string, OrgState>();
  let nextSeq = 1;

  return {
    of(tenantId, now) {
      const existing = organizations.get(tenantId);
      if (existing !== undefined) return { state: existing, created: false };
      const state: OrgState = {
        organization: {
          id: randomUUID(),
          display_name: tenantId,
          jit_provisioning_enabled: true,
          invites_enabled: true,
          sso_login_slug: slug(tenantId),
          created_at: now,
          seq: nextSeq++,
        },
        sso: { default_workspace_role: "Viewer", default_workspaces: ["default"] },
        invites: [],
        members: [],
      };
      organizations.set(tenantId, state);
      return { state, created: true };
    },
    isDefault(state) {
      return [...organizations.values()].every((other) => other.organization.seq >= state.organization.seq);
    },
    snapshot: () =>
      JSON.parse(
        JSON.stringify({ version: 1, next_seq: nextSeq, organizations: Object.fromEntries(organizations) }),
      ) as OrganizationsSnapshot,
    restore(data) {
      if (data === undefined || data === null) {
        organizations = new Map();
        nextSeq = 1;
        return;
      }
      if (
        !isRecord(data) ||
        data.version !== 1 ||
        typeof data.next_seq !== "number" ||
        !isRecord(data.organizations) ||
        !Object.values(data.organizations).every(looksLikeOrgState)
      ) {
        throw new PlumbError(
          "state-corrupt",
          "The organizations part of the saved control-plane state is not readable (expected version 1); move the data directory aside to start empty.",
        );
      }
      organizations = new Map(Object.entries(data.organizations as Record<string, OrgState>));
      nextSeq = data.next_seq;
    },
  };
}
