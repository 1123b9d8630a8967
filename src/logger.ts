import { type Logger, type LoggerOptions, pino } from "pino";

/** Paths that may carry credentials or secret values; pino replaces them with "[redacted]". */
const REDACT_PATHS = [
  "apiKey",
  "*.apiKey",
  "headers['x-api-key']",
  "headers.authorization",
  "req.headers['x-api-key']",
  "req.headers.authorization",
  "*.secrets[*].value",
  "secrets[*].value",
  "body.secrets[*].value",
];

/**
 * Log lines are a static message plus a metadata object: `log.info({ kind, object, id }, "deployment
 * created")`. An object's name goes in `object`: `name` is pino's, the program that wrote the line.
 */
export function createLogger(options: LoggerOptions = {}, destination?: NodeJS.WritableStream): Logger {
  const base: LoggerOptions = {
    level: process.env.PLUMB_LOG_LEVEL ?? "info",
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    ...options,
  };
  return destination ? pino(base, destination as pino.DestinationStream) : pino(base);
}

export type { Logger };
