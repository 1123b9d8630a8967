import { backoffDelay } from "../../clock.js";
import { ApiError } from "../errors.js";
import { retryBackoff, IDEMPOTENT_METHODS, RETRYABLE_STATUSES } from "./retry.js";
import { readKeyFileAgain } from "../config.js";
import { attempt, BLOCKED_PORT } from "./http-attempt.js";
import type { Client, RequestSpec } from "./http-types.js";

function shouldRetry(c: Client, error: ApiError, idempotent: boolean): boolean {
  if (error.status === 429) return true; // refused before any work: safe for every method
  // Refused, or a name with no address, before this client was ever answered: a wrong URL, and
  // five more tries only made the error come 6 s later. (EAI_AGAIN, DNS not answering, may pass.)
  if ((error.detail === "ECONNREFUSED" || error.detail === "ENOTFOUND") && !c.answered) return false;
  if (error.detail === BLOCKED_PORT) return false; // fetch refuses the port itself: never better later
  if (error.code === "network" || error.code === "timeout") return idempotent || !error.ambiguous;
  return idempotent && RETRYABLE_STATUSES.has(error.status);
}

/** After a 401: the key file holds another key now (rotated in place); it replaces the old one. */
function takeRotatedKey(c: Client): boolean {
  const file = c.options.apiKeyFile;
  const key = file === undefined ? undefined : readKeyFileAgain(file);
  if (key === undefined || key === c.auth.apiKey) return false;
  c.redactor.add([key]);
  c.auth = { ...c.auth, apiKey: key };
  c.logger?.info({ file }, "the API key file holds another key since it was read: using it");
  return true;
}

export async function requestWithRetries<T>(c: Client, spec: RequestSpec): Promise<T> {
  const idempotent = spec.idempotent ?? IDEMPOTENT_METHODS.has(spec.method);
  const started = c.clock.now();
  let rotated = false;
  for (let attemptNo = 1; ; attemptNo += 1) {
    let failure: ApiError;
    try {
      return (await attempt(c, spec, attemptNo)) as T;
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      failure = error;
    }
    // A 401 is answered before any work (docs/api-client.md), so any method may go once more.
    if (failure.status === 401 && !rotated && takeRotatedKey(c)) {
      rotated = true;
      continue;
    }
    if (!shouldRetry(c, failure, idempotent) || attemptNo >= c.policy.maxAttempts) throw failure;
    const delay = failure.retryAfterMs ?? backoffDelay(attemptNo, retryBackoff(c.policy), c.random);
    if (c.clock.now() + delay - started > c.policy.maxElapsedMs) throw failure;
    if (failure.status === 429)
      c.limiter.pause({ identity: c.identity, method: spec.method, path: spec.path }, c.clock.now() + delay);
    c.logger?.warn(
      {
        method: spec.method,
        path: spec.path,
        status: failure.status,
        code: failure.code,
        attempt: attemptNo,
        delayMs: delay,
      },
      "api call failed, retrying",
    );
    await c.clock.sleep(delay, spec.signal);
  }
}
