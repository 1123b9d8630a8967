import type { Problem, SourceLocation } from "../../types.js";

// The problem every shape check reports (yaml-shape.ts): an error at a place in the text, of no field.

export const problem = (at: SourceLocation, code: string, message: string): Problem => ({
  ...at,
  severity: "error",
  code,
  field: "",
  message,
});
