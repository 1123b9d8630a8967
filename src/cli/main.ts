#!/usr/bin/env node
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Command, CommanderError } from "commander";
import { describeErrno, isPathError, isPlumbError, type PlumbErrorCode } from "../errors.js";
import { COMMANDS } from "./commands.js";
import { PROGRAM_HELP_AFTER } from "./command-help.js";
import { PLUMB_VERSION } from "./options.js";
import { dropOutputOnBrokenPipe } from "./process-io.js";
import { type FailedRun, failedRunOf, formatErrorJson } from "../report/format-error-json.js";

/**
 * Builds the `plumb` program; each command lives in its own small file under src/cli/. With `only`
 * (the command named on the command line) only that command is loaded; with null (`plumb
 * --version`) none; otherwise (help, a typo to suggest a fix for) all of them.
 */
export async function buildProgram(only?: string | null): Promise<Command> {
  const program = new Command("plumb")
    .description("Declarative GitOps reconciler for hosted agent-server deployments")
    .version(PLUMB_VERSION)
    .showHelpAfterError()
    .addHelpText("after", PROGRAM_HELP_AFTER)
    .exitOverride();
  const names =
    only === null ? [] : only !== undefined && Object.hasOwn(COMMANDS, only) ? [only] : Object.keys(COMMANDS);
  for (const command of await Promise.all(names.map((name) => COMMANDS[name]!())))
    program.addCommand(command.exitOverride());
  return program;
}

/**
 * The sub-command argv names: its first argument that is not an option; null for `plumb --version`
 * (or -V) alone, which needs no command: loading all of them took 0.6-1 s.
 */
const commandNameIn = (argv: readonly string[]): string | null | undefined => {
  const args = argv.slice(2);
  if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) return null;
  return args.find((arg) => !arg.startsWith("-"));
};

/** The code of a path error that is not a PlumbError (see ERROR_CODES). */
const IO_ERROR: PlumbErrorCode = "io-error";

/** `-o json`, `-ojson`, `--output json` or `--output=json` before any `--`. */
function wantsJson(argv: readonly string[]): boolean {
  const args = argv.slice(2);
  const end = args.indexOf("--");
  const flags = end === -1 ? args : args.slice(0, end);
  return flags.some(
    (arg, i) =>
      arg === "-ojson" ||
      arg === "--output=json" ||
      ((arg === "-o" || arg === "--output") && flags[i + 1] === "json"),
  );
}

/** Notes whether anything is written to stdout until the returned function restores it and tells. */
function watchStdout(): () => boolean {
  const stdout = process.stdout;
  // The method itself, put back as it was (a test's own write stays its own); called with stdout.
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const write = stdout.write;
  let wrote = false;
  const watching = function (this: unknown, ...args: Parameters<typeof write>) {
    wrote = true;
    return write.apply(stdout, args);
  } as typeof write;
  stdout.write = watching;
  return () => {
    // Put back only what this replaced: a write set meanwhile (a test's spy) stays.
    if (stdout.write === watching) stdout.write = write;
    return wrote;
  };
}

/** The one top-level catch: typed errors become exit codes and a message, never a stack trace. */
export async function main(argv: string[] = process.argv): Promise<number> {
  // With -o json a failure before any output is printed as one JSON document (formatErrorJson).
  const wroteStdout = watchStdout();
  let failed: FailedRun | undefined;
  try {
    await (await buildProgram(commandNameIn(argv))).parseAsync(argv);
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (error) {
    failed = failure(error);
    return failed.exitCode;
  } finally {
    if (!wroteStdout() && failed && failed.exitCode !== 0 && wantsJson(argv))
      process.stdout.write(formatErrorJson(failed));
  }
}

/** Says on stderr what failed, and returns it for -o json. */
function failure(error: unknown): FailedRun {
  if (error instanceof CommanderError) {
    // commander said it on stderr already
    return { code: "usage", message: error.message, exitCode: error.exitCode === 0 ? 0 : 64 };
  }
  if (isPlumbError(error)) {
    process.stderr.write(`plumb: ${error.message} [${error.code}]\n`);
    return failedRunOf(error);
  }
  if (isPathError(error)) {
    // A path the operator gave (or the machine) is wrong: say which and how, no stack trace.
    const message = `${error.path}: ${describeErrno(error)}; check the path and its permissions`;
    process.stderr.write(`plumb: ${message} [${IO_ERROR}]\n`);
    return { code: IO_ERROR, message, fix: "check the path and its permissions", exitCode: 1 };
  }
  process.stderr.write(
    `plumb: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  const message = `unexpected error: ${error instanceof Error ? error.message : String(error)}`;
  return { code: "internal", message, fix: "a bug: please report it with the message", exitCode: 70 };
}

// Run only when executed as the `plumb` binary (also through the npm bin symlink), not when imported.
const entry = process.argv[1] ? realpathSync(process.argv[1]) : "";
if (entry === fileURLToPath(import.meta.url)) {
  dropOutputOnBrokenPipe([process.stdout, process.stderr]);
  process.exitCode = await main();
}
