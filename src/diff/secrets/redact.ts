import type { Operation } from "fast-json-patch";
import type { Plan, PlannedChange, PlannedRequest } from "../plan/plan-types.js";
import { isObject } from "../values.js";

const REDACTED = "<redacted>";

const redactList = (value: unknown): unknown =>
  Array.isArray(value)
    ? (value as unknown[]).map((item) =>
        isObject(item) && "value" in item ? { ...item, value: REDACTED } : item,
      )
    : value;

function redactRequest(request: PlannedRequest | null): PlannedRequest | null {
  if (!request || !("secrets" in request.body)) return request;
  return { ...request, body: { ...request.body, secrets: redactList(request.body.secrets) } };
}

/** Secret values in a diff sit under /secrets: the whole list, one item, or one item's value. */
function redactOperation(operation: Operation): Operation {
  if (!operation.path.startsWith("/secrets") || !("value" in operation)) return operation;
  const depth = operation.path.split("/").length - 1;
  const value: unknown = operation.value;
  if (depth === 1) return { ...operation, value: redactList(value) } as Operation;
  if (depth === 2 && isObject(value))
    return { ...operation, value: { ...value, value: REDACTED } } as Operation;
  return { ...operation, value: REDACTED } as Operation;
}

export function redactChange(change: PlannedChange): PlannedChange {
  return { ...change, request: redactRequest(change.request), diff: change.diff.map(redactOperation) };
}

/** The plan with every secret value in request bodies and diffs replaced by "<redacted>". */
export function redactPlan(plan: Plan): Plan {
  return { ...plan, changes: plan.changes.map(redactChange) };
}
