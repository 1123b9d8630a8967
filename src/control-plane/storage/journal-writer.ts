import type { FileHandle } from "node:fs/promises";
import { PlumbError } from "../../errors.js";

/** The file operations the journal needs: tests wrap a real file to inject failures (ENOSPC...). */
export type JournalFile = {
  /** Writes at `position`; resolves with the bytes written, which may be fewer than asked. */
  write(data: Buffer, position: number): Promise<number>;
  datasync(): Promise<void>;
  truncate(length: number): Promise<void>;
  close(): Promise<void>;
};

export const journalFile = (handle: FileHandle): JournalFile => ({
  write: async (data, position) => (await handle.write(data, 0, data.length, position)).bytesWritten,
  datasync: () => handle.datasync(),
  truncate: (length) => handle.truncate(length),
  close: () => handle.close(),
});

/** A write that did not reach the journal: it was not acknowledged (the server answers 503). */
export class JournalWriteError extends PlumbError {
  constructor(
    message: string,
    /** True once the journal can take no more writes until a restart (its tail could not be cut). */
    readonly fatal: boolean,
    cause: unknown,
  ) {
    super("journal-write", message, { cause });
    this.name = "JournalWriteError";
  }
}

export type Journal = {
  /**
   * Appends records (each one JSON text, no newline) and resolves once they, and everything
   * appended before them, are on disk (concurrent appends share one write and one fsync). A
   * failed append is not kept: it rejects, and so does every append queued behind it (they were
   * made on top of it), so the caller undoes them all (state.ts) and the next append starts from
   * the last durable one.
   */
  append(records: string[]): Promise<void>;
  close(): Promise<void>;
};

type Waiter = { text: string; done: () => void; fail: (e: unknown) => void };

/**
 * Writes at explicit offsets from `start`. On a failed write or fsync the file is cut back to the
 * last durable offset, so no torn line can ever sit before a later record; if it cannot be cut,
 * the journal refuses every later write (the torn line stays the last one, which loading ignores).
 */
export function groupCommitter(file: JournalFile, start: number, describe: string): Journal {
  let durable = start;
  let broken: JournalWriteError | undefined;
  let queue: Waiter[] = [];
  let flushing: Promise<void> | undefined;

  const writeAll = async (data: Buffer) => {
    for (let done = 0; done < data.length;) {
      const n = await file.write(data.subarray(done), durable + done);
      if (n <= 0) throw new Error("the write made no progress");
      done += n;
    }
    await file.datasync();
  };

  const flushBatch = async (batch: Waiter[]) => {
    if (broken) throw broken;
    const text = batch.map((b) => b.text).join("");
    if (text === "") return;
    const data = Buffer.from(text, "utf8");
    try {
      await writeAll(data);
    } catch (error) {
      const reason = (error as Error).message;
      try {
        await file.truncate(durable);
        await file.datasync();
      } catch (cutError) {
        broken = new JournalWriteError(
          `The journal ${describe} could not be written (${reason}) nor cut back to its last good record (${(cutError as Error).message}); this write was undone and no write is accepted until the control plane restarts, which recovers every acknowledged write.`,
          true,
          cutError,
        );
        throw broken;
      }
      throw new JournalWriteError(
        `The journal ${describe} could not be written (${reason}); this write was not acknowledged and was undone. Free disk space and retry.`,
        false,
        error,
      );
    }
    durable += data.length;
  };

  const flush = async () => {
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      try {
        await flushBatch(batch);
        for (const b of batch) b.done();
      } catch (error) {
        // Everything queued behind a failed batch was built on it: it fails too, unwritten.
        const behind = queue;
        queue = [];
        for (const b of [...batch, ...behind]) b.fail(error);
      }
    }
    flushing = undefined;
  };

  return {
    append(records) {
      if (records.length === 0 && !broken) return Promise.resolve();
      const text = records.map((r) => `${r}\n`).join("");
      const written = new Promise<void>((done, fail) => queue.push({ text, done, fail }));
      flushing ??= flush();
      return written;
    },
    async close() {
      await flushing;
      await file.close();
    },
  };
}
