// One decision for every command's output: colour only on a terminal or with FORCE_COLOR, and never with NO_COLOR set
// (https://no-color.org: any non-empty value). picocolors' own guess is not used: it turns colour on
// under CI=true even when piped.

export type ColorIo = {
  stdout: { isTTY?: boolean };
  env: Record<string, string | undefined>;
};

/**
 * NO_COLOR (non-empty) turns colour off; else FORCE_COLOR (non-empty, not "0" or "false") turns it
 * on even when piped (a CI log that renders ANSI); else colour only on a TTY.
 */
export function useColor(io: ColorIo): boolean {
  if (io.env.NO_COLOR) return false;
  const force = io.env.FORCE_COLOR;
  if (force !== undefined && force !== "") return force !== "0" && force !== "false";
  return Boolean(io.stdout.isTTY);
}
