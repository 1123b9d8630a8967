import { readFileSync } from "node:fs";
import { InvalidArgumentError } from "commander";
import { Cron } from "croner";
import { UsageError } from "../errors.js";
import { parseDuration } from "./options.js";

// Parsers of flag values shared by the commands: each throws commander's InvalidArgumentError (exit 64).

/** 1 to 256 (objects at once). */
export const positiveInt = (text: string) => {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 256)
    throw new InvalidArgumentError("expected an integer from 1 to 256");
  return n;
};

/** "1000/10s": requests per window; at least 10 so the client's token bucket has room for a burst. */
export function parseRateLimit(text: string): { limit: number; windowMs: number } {
  const [count, window, extra] = text.split("/");
  const limit = Number(count);
  if (extra !== undefined || window === undefined || !Number.isInteger(limit) || limit < 10)
    throw new InvalidArgumentError(`expected requests per window like 1000/10s (at least 10), got "${text}"`);
  const windowMs = parseDuration(window);
  if (windowMs < 1) throw new InvalidArgumentError(`the window of "${text}" must be longer than 0`);
  return { limit, windowMs };
}

/** A cron expression croner accepts (checked at parse time, not at the first tick). */
export const cronExpression = (text: string) => {
  try {
    new Cron(text, { paused: true }).stop();
  } catch (error) {
    throw new InvalidArgumentError(
      `not a cron expression (${(error as Error).message}), e.g. "*/10 * * * *"`,
    );
  }
  return text;
};

/** A secret from `--FLAG FILE`, else from the environment variable; undefined when neither is set. */
export function secretSetting(
  flag: string,
  file: string | undefined,
  fromEnv: string | undefined,
): string | undefined {
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, "utf8").trim();
    } catch (error) {
      throw new UsageError(
        `cannot read ${flag} ${file} (${(error as NodeJS.ErrnoException).code ?? "unreadable"})`,
      );
    }
    if (!text) throw new UsageError(`${flag} ${file} is empty`);
    return text;
  }
  return fromEnv?.trim() || undefined;
}

/** A state lock lease: at least 1 s (the holder renews every third of it). */
export const leaseDuration = (text: string) => {
  const ms = parseDuration(text);
  if (ms < 1_000) throw new InvalidArgumentError(`the lease must be at least 1s, got "${text}"`);
  return ms;
};
