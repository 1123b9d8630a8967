#!/usr/bin/env node
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Command, CommanderError } from "commander";
import { describeErrno, isPathError, isPlumbError, type PlumbErrorCode } from "../errors.js";
import { COMMANDS } from "./commands.js";
import { PLUMB_VERSION } from "./options.js";
import { dropOutputOnBrokenPipe } from "./process-io.js";

/**
 * Builds the `plumb` program; each command lives in its own small file under src/cli/. With `only`
 * (the command named on the command line) only that command is loaded; otherwise (help, a typo
 * to suggest a fix for) all of them.
 */
export async function buildProgram(only?: string): Promise<Command> {
  const program = new Command("plumb")
    .description("Declarative GitOps reconciler for hosted agent-server deployments")
    .version(PLUMB_VERSION)
    .showHelpAfterError()
    .exitOverride();
  const names = only !== undefined && Object.hasOwn(COMMANDS, only) ? [only] : Object.keys(COMMANDS);
  for (const command of await Promise.all(names.map((name) => COMMANDS[name]!())))
    program.addCommand(command.exitOverride());
  return program;
}

/** The sub-command argv names: its first argument that is not an option. */
const commandNameIn = (argv: readonly string[]) => argv.slice(2).find((arg) => !arg.startsWith("-"));

/** The code of a path error that is not a PlumbError (see ERROR_CODES). */
const IO_ERROR: PlumbErrorCode = "io-error";

/** The one top-level catch: typed errors become exit codes and a message, never a stack trace. */
export async function main(argv: string[] = process.argv): Promise<number> {
  try {
    await (await buildProgram(commandNameIn(argv))).parseAsync(argv);
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? 0 : 64;
    }
    if (isPlumbError(error)) {
      process.stderr.write(`plumb: ${error.message} [${error.code}]\n`);
      return error.exitCode;
    }
    if (isPathError(error)) {
      // A path the operator gave (or the machine) is wrong: say which and how, no stack trace.
      process.stderr.write(
        `plumb: ${error.path}: ${describeErrno(error)}; check the path and its permissions [${IO_ERROR}]\n`,
      );
      return 1;
    }
    process.stderr.write(
      `plumb: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return 70;
  }
}

// Run only when executed as the `plumb` binary (also through the npm bin symlink), not when imported.
const entry = process.argv[1] ? realpathSync(process.argv[1]) : "";
if (entry === fileURLToPath(import.meta.url)) {
  dropOutputOnBrokenPipe([process.stdout, process.stderr]);
  process.exitCode = await main();
}
