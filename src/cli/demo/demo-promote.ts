import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { PlumbError } from "../../errors.js";
import type { SessionIo } from "../../reconcile/session.js";
import { promoteCommand } from "../sync/promote.js";

// The demo's promotion: `plumb promote DIR --to prod` as the command runs it, first as it stands
// (the soak gate holds it back: staging's revisions are seconds old), then with the copy's soak
// made 0s, writing staging's verified versions into prod's overrides.

/** Runs `plumb promote DIR --to prod ...flags`: 0, or 1 when a gate blocked it (its report printed). */
export async function promoteToProd(dir: string, flags: string[], io: SessionIo): Promise<number> {
  process.exitCode = 0;
  try {
    await promoteCommand(io).parseAsync([dir, "--to", "prod", ...flags], { from: "user" });
    return Number(process.exitCode ?? 0);
  } catch (error) {
    if (error instanceof PlumbError && error.code === "promotion-blocked") {
      io.stdout.write(`${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    process.exitCode = 0;
  }
}

/** The copy's prod Environment without its soak time, so the demo need not wait 30 minutes. */
export async function skipSoak(dir: string): Promise<void> {
  const file = join(dir, "environments", "prod.yaml");
  const text = await readFile(file, "utf8");
  await writeFile(file, text.replace(/^(\s+soak: )\S+/m, "$10s"));
}
