import type { PlatformClient } from "../../../api/platform-client.js";
import type { SecretRedactor } from "../../../api/secret-redactor.js";
import type { DesiredObject, LiveState } from "../../../diff/plan/build-plan.js";
import type { Plan } from "../../../diff/plan/plan-types.js";
import type { ManifestLoads } from "../../../manifest/load.js";
import type { Problem } from "../../../manifest/types.js";
import type { ServerFactsReader } from "../server-facts.js";
import type { ObjectStatus } from "../../../status/status-types.js";
import type { LiveReader } from "../targets.js";

// What planManifests is given (the root, targets, clients, records) and what it answers.

/** The API clients plan reads live state with. */
type LiveReaders = {
  controlPlane: LiveReader;
  /** Needed only when an OrganizationAccess manifest is planned. */
  platform?: Pick<PlatformClient, "getOrganization"> | undefined;
  /** Reads the installation's create rules (mode, integrations, listeners) when a plan creates. */
  server?: ServerFactsReader | undefined;
};

export type PlanManifestsOptions = PlanBaseOptions &
  (
    | LiveReaders
    | {
        /**
         * Builds the clients (reads the API settings): called once, after the manifests are valid
         * and before any read starts, so a missing setting fails before anything is in flight.
         */
        connect: () => LiveReaders;
      }
  );

type PlanBaseOptions = {
  /** Manifest root (directory or one file). */
  root: string;
  /** Only these object names (metadata.name); all when empty. An unknown name is a UsageError. */
  targets?: readonly string[];
  /** With targets, up to this many deployments are looked up by name instead of listed (default 10). */
  targetLookupLimit?: number;
  /** Environment for `valueFrom: {env}` secrets; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Parse a big tree on worker threads too (loadManifests' `parallel`): the commands, not the controller. */
  parallelParse?: boolean;
  /** A directory runs with the Environment documents above it (loadManifests' `environmentsAbove`): the commands. */
  environmentsAbove?: boolean;
  /** An environment was asked for (loadManifests' `environmentRequested`). */
  environmentRequested?: boolean;
  /** Learns each secret value as it is resolved, so server text that echoes one is redacted. */
  redactor?: SecretRedactor;
  /** Deployments that may be replaced (deleted, then created) when an immutable field changes. */
  replace?: readonly string[];
  /**
   * The status record of an object (recordsFromStatus): its secret fingerprints and last upload
   * tell what changed, and a write-ahead intent left by a crash is settled against live.
   */
  recorded?: RecordLookup;
  signal?: AbortSignal;
  /** Plan this environment's view of the manifests (docs/environments.md); required when any is defined. */
  environment?: string;
  /** The command's loads (loadManifestsOnce): its environments' plans parse the tree once. */
  loads?: ManifestLoads | undefined;
};

export type PlanManifestsResult =
  /**
   * Invalid manifests (stopped before any API call), or creates the installation refuses (its
   * mode, integrations, listeners: stopped after reading, before anything is sent).
   */
  | { ok: false; problems: Problem[] }
  | {
      ok: true;
      plan: Plan;
      desired: DesiredObject[];
      live: LiveState;
      problems: Problem[];
      /** The directory manifest paths are relative to (the root, or the one file's directory). */
      root: string;
      /** With an environment: the files of Deployments that do not run in it (a removal there). */
      elsewhere: readonly string[];
    };

export type RecordLookup = (kind: string, name: string) => ObjectStatus | undefined;
