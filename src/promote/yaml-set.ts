// The in-place YAML setter moved to src/environment/set-values.ts (drift --write with environments
// uses it too); this name stays for the promotion decisions that import its edit type.
export type { SetEdit } from "../environment/set-values.js";
