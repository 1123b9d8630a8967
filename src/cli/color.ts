// One decision for every command's output: colour only on a terminal, and never with NO_COLOR set
// (https://no-color.org: any non-empty value). picocolors' own guess is not used: it turns colour on
// under CI=true even when piped.

export type ColorIo = {
  stdout: { isTTY?: boolean };
  env: Record<string, string | undefined>;
};

/** True when stdout is a TTY and NO_COLOR is unset or empty. */
export const useColor = (io: ColorIo): boolean => Boolean(io.stdout.isTTY) && !io.env.NO_COLOR;
