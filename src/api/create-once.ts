import { backoffDelay, systemClock } from "../clock.js";
import type { Deployment, DeploymentCreateRequest } from "../schema/deployment.js";
import { shapeCheck } from "../schema/validators.js";
import { ApiError } from "./errors.js";
import type { HttpClient, HttpClientOptions } from "./transport/http.js";
import { DEFAULT_RETRY_POLICY, retryBackoff } from "./transport/retry.js";

const DEPLOYMENT = shapeCheck("Deployment");

// A deployment created once, even when a response is lost. The create POST has no idempotency key,
// so it is not resent blindly: after a failure whose outcome is unknown, the name is looked up first.

type CreateOnceOptions = {
  /** POST attempts when the outcome of the previous one is unknown. */
  attempts: number;
  /** The deployment named exactly `name`, or null. */
  findByName: (name: string, signal?: AbortSignal) => Promise<Deployment | null>;
};

/** The control plane client's `createDeployment`, over its HTTP client and transport settings. */
export function createDeploymentOnce(
  http: HttpClient,
  transport: Pick<HttpClientOptions, "clock" | "random" | "retry" | "logger">,
  { attempts, findByName }: CreateOnceOptions,
) {
  const clock = transport.clock ?? systemClock;
  const random = transport.random ?? Math.random;
  const policy = { ...DEFAULT_RETRY_POLICY, ...transport.retry };
  const log = transport.logger;

  return async function createDeployment(
    body: DeploymentCreateRequest,
    signal?: AbortSignal,
  ): Promise<Deployment> {
    let outcomeUnknown = false;
    const started = clock.now();
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await http.request<Deployment>({
          method: "POST",
          path: "/v2/deployments",
          body,
          schema: DEPLOYMENT,
          idempotent: false,
          signal,
        });
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        // 409 after an attempt whose outcome we never saw: that attempt created it.
        if (error.code === "conflict" && outcomeUnknown) {
          const found = await findByName(body.name, signal);
          if (found) return found;
          throw error;
        }
        if (!error.ambiguous || attempt >= attempts) throw error;
        outcomeUnknown = true;
        log?.warn(
          { name: body.name, code: error.code, status: error.status, attempt },
          "create outcome unknown, looking it up",
        );
        const found = await findByName(body.name, signal);
        if (found) return found;
        // The server's Retry-After (a 503's) when it sends one: a backoff of a few hundred ms spent
        // every attempt inside a short outage that an update (send-change.ts) waits out.
        const delay = error.retryAfterMs ?? backoffDelay(attempt, retryBackoff(policy), random);
        if (clock.now() + delay - started > policy.maxElapsedMs) throw error;
        await clock.sleep(delay, signal);
      }
    }
  };
}
