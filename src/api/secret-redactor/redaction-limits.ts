// What a redaction writes, and how long a value or a cut form must be to be searched for.

export const REDACTED = "[redacted]";
/** Shorter values are not searched for: they would match everywhere. */
export const MIN_VALUE_LENGTH = 4;
/** A form cut short by a server (a truncated excerpt) is still found from this many characters. */
export const MIN_PREFIX = 8;
/**
 * In a live value (redactWhole) a cut form counts from this many characters, or from MIN_PREFIX
 * where it ends the value (a field the server truncated): shorter, it is text a secret starts with.
 */
export const MIN_LIVE_CUT = 16;
