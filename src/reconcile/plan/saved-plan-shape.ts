import { shapeCheck } from "../../schema/validators.js";

// A saved plan's shape (saved-plan-schema.ts), checked with its validator compiled at build time.

const check = shapeCheck("SavedPlan");
const checkEnvironments = shapeCheck("SavedEnvironments");

/** The `path: problem` lines where `value` is not a saved plan of environments' outer shape; [] when it is. */
export function savedEnvironmentsProblems(value: unknown): string[] {
  return checkEnvironments(value);
}

/** The `path: problem` line where `value` is not a saved plan's shape; [] when it is. */
export function savedPlanProblems(value: unknown): string[] {
  return check(value);
}
