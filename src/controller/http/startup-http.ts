import { Gauge, Registry } from "prom-client";
import { type ControllerHttp, type HttpHandlers, startControllerHttp } from "./http-server.js";

// The controller listens before anything slow (the first clone of --repo, waiting for the state
// lock, opening the status store): /livez and /healthz answer 200 from the start, /readyz 503 with
// the phase, /metrics says plumb_leader 0. The standby and then the leader take over the same
// socket (ControllerHttp.use), so a Kubernetes startup probe never waits for a clone.

/** What the HTTP side answers while the controller is `phase` (not leading yet). */
export function startingHandlers(phase: string, statusToken: string | undefined): HttpHandlers {
  const registry = new Registry();
  new Gauge({
    name: "plumb_leader",
    help: "1 while this controller leads, 0 on standby",
    registers: [registry],
  }).set(0);
  return {
    ready: () => false,
    notReady: () => ({ reason: phase }),
    registry,
    status: () => ({ ready: false, phase }),
    statusToken,
    webhookSecret: undefined,
    onWebhook: () => undefined,
  };
}

/** Binds --listen at once (a taken port fails startup here); undefined without --listen. */
export async function listenEarly(
  listen: Parameters<typeof startControllerHttp>[0] | undefined,
  statusToken: string | undefined,
): Promise<ControllerHttp | undefined> {
  if (!listen) return undefined;
  return startControllerHttp(listen, startingHandlers("starting: fetching the manifests", statusToken));
}
