import type { ServerResponse } from "node:http";

// Writing an answer: a JSON (or other) body whole, or a long JSON body piece by piece.

export const send = (res: ServerResponse, code: number, body: unknown, type = "application/json") => {
  const text = type === "application/json" ? `${JSON.stringify(body)}\n` : String(body);
  res.writeHead(code, { "content-type": type, "cache-control": "no-store" });
  res.end(text);
};

/** A long JSON body written piece by piece, each once the socket took the one before. */
export async function sendPieces(res: ServerResponse, pieces: Iterable<string>): Promise<void> {
  res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
  for (const piece of pieces) {
    if (res.destroyed) return; // the client went away: the rest is never made
    if (!res.write(piece)) await drainedOrClosed(res);
  }
  res.end();
}

const drainedOrClosed = (res: ServerResponse) =>
  new Promise<void>((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
