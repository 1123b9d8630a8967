import type { Plan } from "../diff/plan/plan-types.js";
import { redactPlan } from "../diff/secrets/redact.js";

/** The stable JSON contract (format_version "1"), every secret value redacted. */
export function formatPlanJson(plan: Plan): string {
  return `${JSON.stringify(redactPlan(plan), null, 2)}\n`;
}
