import type { ConnectionFlags } from "../options.js";

// The command line `plan --out FILE` prints to apply exactly that plan: the same store and
// control plane as the plan (else apply reads another status store or tenant), --prune and
// --replace again (apply --plan asks for them as consent), and no --target (the plan names them).

export type PlanHintFlags = ConnectionFlags & {
  mode?: string;
  prune?: boolean;
  replace?: string[];
  env?: string[];
};

/** A word as the shell reads it back: bare when safe, else in single quotes. */
const shellWord = (word: string) =>
  /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;

/** `plumb apply PATH --plan FILE` with every flag of the plan that apply needs again. Pure. */
export function formatApplyHint(path: string, planFile: string, flags: PlanHintFlags): string {
  const words = ["plumb", "apply", path, "--plan", planFile];
  const pairs: [string, string | undefined][] = [
    ["--api-url", flags.apiUrl],
    ["--api-key-file", flags.apiKeyFile],
    ["--tenant-id", flags.tenantId],
    ["--platform-url", flags.platformUrl],
    ["--mode", flags.mode],
    ["--status-dir", flags.statusDir],
    ["--status-branch", flags.statusBranch],
  ];
  for (const [flag, value] of pairs) if (value !== undefined) words.push(flag, value);
  if (flags.prune) words.push("--prune");
  for (const name of flags.replace ?? []) words.push("--replace", name);
  for (const name of flags.env ?? []) words.push("--env", name);
  return words.map(shellWord).join(" ");
}
