import { MAX_BODY_BYTES, unexpectedResponse } from "./response-body.js";

// An event stream's events, each bounded: the SSE parser keeps an event's text until the blank line
// that ends it, so a stream that never sends one (an agent server streaming one endless line or
// endless `data:` lines) filled the heap for as long as the verify budget let it run.

/** The most one event (its lines up to the blank line ending it) may hold: a 2xx body's limit. */
const MAX_EVENT_BYTES = MAX_BODY_BYTES;

/**
 * Passes the bytes through unchanged and errors the stream, as `unexpected-response` naming the
 * request, once one event passes `limit` bytes (LF and CRLF line ends; CR alone counts as text).
 */
export function eventSizeLimit(
  request: { method: string; path: string },
  limit = MAX_EVENT_BYTES,
): TransformStream<Uint8Array, Uint8Array> {
  let eventBytes = 0;
  let lineBytes = 0; // of the current line, its CR not counted
  return new TransformStream({
    transform(chunk, controller) {
      for (const byte of chunk) {
        if (byte === 0x0a) {
          if (lineBytes === 0) eventBytes = 0; // a blank line: the event ended
          lineBytes = 0;
          continue;
        }
        if (byte !== 0x0d) lineBytes += 1;
        eventBytes += 1;
        if (eventBytes > limit) {
          controller.error(
            unexpectedResponse(request, [`an event larger than ${limit / 1024 / 1024} MiB, not read`]),
          );
          return;
        }
      }
      controller.enqueue(chunk);
    },
  });
}
