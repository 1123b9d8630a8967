import type { Plan } from "./plan-types.js";
import { redactPlan } from "./redact.js";

/** The stable JSON contract (format_version "1"), every secret value redacted. */
export function formatPlanJson(plan: Plan): string {
  return `${JSON.stringify(redactPlan(plan), null, 2)}\n`;
}
