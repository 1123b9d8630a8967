// Moved to src/reconcile/plan-run.ts (core must not import the CLI); kept until src/controller and demo switch.
export * from "../reconcile/plan-run.js";
