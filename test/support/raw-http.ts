import { connect, type Socket } from "node:net";

// A raw HTTP/1.1 request over node:net, for what fetch and node:http hide: whether the server
// ended the connection after its answer (its FIN) or left it open, and how much of a body a client
// could push into it before it closed.

type RawAnswer = { status: number; headers: Record<string, string> };

export type RawRequest = {
  socket: Socket;
  /** The answer's status and headers (names in lower case), once its head has arrived. */
  answer: Promise<RawAnswer>;
  /** On close: "end" when the server ended the connection (FIN) first, else "reset". */
  closed: Promise<"end" | "reset">;
  /**
   * On close, how long after the answer's head arrived: an early answer closes at once (by a FIN,
   * or by a reset when the client's unread bytes are still in the server's buffer: Node 24).
   */
  closedAfterAnswerMs: Promise<number>;
  /**
   * Writes up to `bytes` of body in 64 KiB pieces (chunk-encoded if `chunked`), each once the one
   * before was taken, until the connection closes (or, with `untilAnswered`, an answer arrives);
   * resolves with the bytes written.
   */
  push(bytes: number, options?: { chunked?: boolean; untilAnswered?: boolean }): Promise<number>;
  /** Resolves once what the server sent so far matches `pattern`; rejects if it closes first. */
  received(pattern: RegExp): Promise<void>;
};

const PIECE = 64 * 1024;

function parseHead(text: string): RawAnswer {
  const [statusLine = "", ...lines] = text.split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0), headers };
}

/**
 * Connects to `url`'s port on 127.0.0.1 and writes `head` (request line and headers, no blank line);
 * `from` is the client's own address (any of 127.0.0.0/8 on Linux: another client to the server).
 */
export function rawRequest(url: string, head: string, from?: string): RawRequest {
  const socket = connect({ port: Number(new URL(url).port), host: "127.0.0.1", localAddress: from });
  socket.on("error", () => undefined);
  let text = "";
  let answered = false;
  let answeredAt = Number.NaN;
  let ended = false;
  const answer = new Promise<RawAnswer>((resolve, reject) => {
    socket.on("data", (data: Buffer) => {
      text += data.toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      if (end < 0 || answered) return;
      answered = true;
      answeredAt = Date.now();
      resolve(parseHead(text.slice(0, end)));
    });
    socket.on("close", () => reject(new Error(`closed before an answer: ${JSON.stringify(text)}`)));
  });
  answer.catch(() => undefined);
  socket.on("end", () => (ended = true));
  const closed = new Promise<"end" | "reset">((resolve) =>
    socket.on("close", () => resolve(ended ? "end" : "reset")),
  );
  socket.write(`${head.replace(/(\r\n)*$/, "")}\r\n\r\n`);
  const writeOne = (data: Buffer) =>
    new Promise<boolean>((resolve) => {
      if (socket.destroyed || socket.writableEnded) return resolve(false);
      socket.write(data, (error) => resolve(!error));
    });
  const push: RawRequest["push"] = async (bytes, options = {}) => {
    const piece = Buffer.alloc(PIECE, 97);
    const chunk = options.chunked
      ? Buffer.concat([Buffer.from(`${PIECE.toString(16)}\r\n`), piece, Buffer.from("\r\n")])
      : piece;
    let written = 0;
    while (written < bytes && !(options.untilAnswered && answered)) {
      if (!(await writeOne(chunk))) break;
      written += PIECE;
    }
    return written;
  };
  const received = (pattern: RegExp) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!pattern.test(text)) return;
        socket.off("data", check);
        resolve();
      };
      socket.on("data", check);
      socket.once("close", () =>
        reject(new Error(`closed before ${String(pattern)}: ${JSON.stringify(text)}`)),
      );
      check();
    });
  const closedAfterAnswerMs = closed.then(() => Date.now() - answeredAt);
  return { socket, answer, closed, closedAfterAnswerMs, push, received };
}
