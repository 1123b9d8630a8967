import type { Writable } from "node:stream";
import { PlumbError } from "../../errors.js";
import { createRequire } from "node:module";
import type PinoPretty from "pino-pretty";
import { type ColorIo, useColor } from "../color.js";

// Where `plumb controller` writes its log: readable lines on a terminal (pino-pretty: time, level,
// message, then the fields), JSON lines everywhere else (a log collector, kubectl logs). Chosen by
// PLUMB_LOG_FORMAT=json|pretty, else by whether stdout is a terminal.

export type LogFormat = "json" | "pretty";

// pino-pretty is loaded only for a terminal: JSON logs (containers, CI) never need it.
const require = createRequire(import.meta.url);

export function chooseLogFormat(io: ColorIo): LogFormat {
  const asked = io.env.PLUMB_LOG_FORMAT?.trim().toLowerCase();
  if (asked === "json" || asked === "pretty") return asked;
  if (asked)
    throw new PlumbError("usage", `PLUMB_LOG_FORMAT must be json or pretty; got "${asked}"`, {
      exitCode: 64,
    });
  return io.stdout.isTTY ? "pretty" : "json";
}

/** undefined: pino's own JSON to stdout. */
export function buildLogStream(
  io: ColorIo & { stdout: NodeJS.WritableStream & { isTTY?: boolean } },
): Writable | undefined {
  if (chooseLogFormat(io) === "json") return undefined;
  const pinoPretty = require("pino-pretty") as typeof PinoPretty;
  return pinoPretty({
    colorize: useColor(io),
    destination: io.stdout,
    sync: true,
    translateTime: "SYS:HH:MM:ss.l",
    ignore: "pid,hostname,name",
    singleLine: true,
  });
}
