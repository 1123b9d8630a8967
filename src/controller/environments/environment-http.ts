import type { Registry } from "prom-client";
import type { Clock } from "../../clock.js";
import type { Logger } from "../../logger.js";
import { buildObjectPage } from "../../status-page/page-model.js";
import { buildStandbyHeader } from "../../status-page/page-header.js";
import { buildMatrixPage, type MatrixPage, type MatrixQuery } from "../../status-page/matrix-model.js";
import type { LoadedEnvironment } from "../../manifest/types.js";
import { loadUntrackedStatusStore } from "../../git/status/status-source.js";
import { emptyStatusStore } from "../../status/status-types.js";
import type { ControllerStatusJson } from "../controller-types.js";
import type { HttpHandlers } from "../http/http-server.js";
import type { PageRoutes } from "../http/page-routes.js";
import type { EnvironmentClaim } from "./environment-claim.js";
import { environmentRecords } from "./environment-records.js";
import { mergeMetricsText } from "./merge-metrics.js";

// The HTTP side of a controller of environments: one socket, each environment's answers composed.
// /readyz is 200 while this replica leads at least one environment and each it leads has loaded its
// manifests (a replica leading none is a standby: 503), its body the role of each; /metrics is every
// led environment's registry labelled `environment` (standbys: plumb_leader 0); /status the sum and
// each environment's; the page shows one environment at a time (`?env=NAME`, else the first led)
// and /ui/api/environments the per-environment records (environment-records.ts); /ui/api/matrix the
// deployment × environment matrix of every environment, led here or not.

export function environmentHandlers(deps: {
  claims: () => readonly EnvironmentClaim[];
  /** Every environment reconciled now, and where its status store is (the matrix reads those led elsewhere). */
  environments: () => readonly LoadedEnvironment[];
  /** The problem of an environment whose document in git is invalid (its last valid one runs). */
  invalid: (environment: string) => string | undefined;
  /** Why an environment is refused (environment-name-collision while it collides with another). */
  refused: (environment: string) => string | undefined;
  statusDirOf: (environment: string) => string;
  status: () => ControllerStatusJson;
  statusToken: string | undefined;
  webhookSecret: string | undefined;
  sync: (trigger: string) => Promise<void>;
  scanned: (source: string, result: "ok" | "invalid" | "error") => void;
  clock: Clock;
  log: Logger;
}): HttpHandlers {
  const { claims, log } = deps;
  const leaders = () => claims().filter((c) => c.role() === "leader" && c.store());
  const roles = () =>
    claims().map((c) => ({
      environment: c.name,
      role: c.role(),
      ready: c.role() === "leader" && (c.store()?.loaded() ?? false),
      ...(c.leader() && c.role() !== "leader" ? { leader: c.leader() } : {}),
      ...(c.error() ? { error: c.error() } : {}),
      ...(deps.invalid(c.name) ? { invalid: deps.invalid(c.name) } : {}),
    }));
  const ready = () => leaders().length > 0 && leaders().every((c) => c.store()!.loaded());
  const registry: Pick<Registry, "metrics" | "contentType"> = {
    contentType: "text/plain; version=0.0.4; charset=utf-8",
    metrics: async () =>
      mergeMetricsText(
        await Promise.all(
          claims().map((c) => {
            const store = c.store();
            return c.role() === "leader" && store
              ? store.registry.metrics()
              : Promise.resolve(standbyMetrics(c.name));
          }),
        ),
      ),
  };
  return {
    ready,
    readyBody: () => ({ environments: roles() }),
    notReady: () => ({
      reason: leaders().length === 0 ? "standby: this replica leads no environment" : "loading the manifests",
      environments: roles(),
    }),
    registry,
    status: deps.status,
    statusToken: deps.statusToken,
    webhookSecret: deps.webhookSecret,
    page: environmentPage(deps, (query) => matrixOf(deps, query)),
    onWebhook: () => {
      log.info({}, "webhook received: fetching now");
      void deps.sync("webhook");
    },
    onBadWebhook: (reason) => {
      deps.scanned("webhook", "error");
      log.warn({ reason }, "webhook rejected");
    },
  };
}

const standbyMetrics = (environment: string) =>
  `# HELP plumb_leader 1 while this controller leads, 0 on standby\n# TYPE plumb_leader gauge\nplumb_leader{environment="${environment}"} 0\n`;

/**
 * The deployment × environment matrix (src/status-page/matrix-model.ts): the records of environments
 * led here from memory, the others' from their status stores (written by the replica leading them).
 */
async function matrixOf(
  deps: Pick<Parameters<typeof environmentHandlers>[0], "claims" | "environments" | "statusDirOf">,
  query: MatrixQuery,
): Promise<MatrixPage> {
  const claims = deps.claims();
  const environments = await Promise.all(
    deps.environments().map(async ({ manifest }) => {
      const name = manifest.metadata.name;
      const claim = claims.find((c) => c.name === name);
      const led = claim?.role() === "leader" ? claim.store() : undefined;
      const records = led
        ? led.statuses.values()
        : (await storeLedElsewhere(deps.statusDirOf(name))).values();
      return {
        name,
        promotion_from: manifest.spec.promotion?.from ?? null,
        name_suffix: manifest.spec.name_suffix ?? null,
        records,
      };
    }),
  );
  return buildMatrixPage(environments, query);
}

/**
 * The records of an environment led by another replica, read from its store: never one git tracks
 * (none at all when git cannot say), as the stores led here read theirs (docs/status.md).
 */
const storeLedElsewhere = async (dir: string) =>
  (await loadUntrackedStatusStore(dir).catch(() => emptyStatusStore())).objects;

function environmentPage(
  deps: Pick<
    Parameters<typeof environmentHandlers>[0],
    "claims" | "invalid" | "refused" | "environments" | "clock"
  >,
  matrix: (query: MatrixQuery) => Promise<MatrixPage>,
): PageRoutes {
  const { claims } = deps;
  const pageOf = (environment: string | undefined) => {
    const led = claims().filter((c) => c.role() === "leader" && c.store()?.handlers?.page);
    const claim = environment ? led.find((c) => c.name === environment) : led[0];
    return claim ? { name: claim.name, page: claim.store()!.handlers!.page! } : undefined;
  };
  const summary = () =>
    claims().map((c) => {
      const invalid = deps.invalid(c.name);
      return { environment: c.name, role: c.role(), ...(invalid ? { invalid } : {}) };
    });
  // A refused environment is led nowhere: every header says why, at its Environment document.
  const refusals = () =>
    deps.environments().flatMap(({ file, location, manifest }) => {
      const reason = deps.refused(manifest.metadata.name);
      const message = `environment ${manifest.metadata.name} refused, nothing sent to it: ${reason}`;
      return reason ? [{ file, problems: [{ line: location.line, column: location.column, message }] }] : [];
    });
  return {
    header(environment) {
      const led = pageOf(environment);
      const header = led
        ? { ...led.page.header(), environment: led.name }
        : buildStandbyHeader("", "(no environment led here)", new Date(deps.clock.now()));
      return { ...header, invalid: [...refusals(), ...header.invalid], environments: summary() };
    },
    objects: (query, environment) => pageOf(environment)?.page.objects(query) ?? buildObjectPage([], query),
    detail: async (kind, name, environment) => (await pageOf(environment)?.page.detail(kind, name)) ?? null,
    subscribe(write) {
      const stops = claims().flatMap((c) => {
        const page = c.role() === "leader" ? c.store()?.handlers?.page : undefined;
        return page ? [page.subscribe(write)] : [];
      });
      return () => stops.forEach((stop) => stop());
    },
    environments: () => environmentRecords(claims(), deps.invalid),
    matrix,
  };
}
