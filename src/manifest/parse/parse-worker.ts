import { parentPort, workerData } from "node:worker_threads";
import { type ChunkReply, parseForThread, type WorkerJob } from "./parse-pool.js";

// Worker-thread entry (parse-pool.ts). Started once the main thread has parsed a tree's first
// chunk (or earlier, by startParsePool), it waits for its job (the listed files); then it takes the next chunk of them not yet taken, parses it, posts
// it as plain data, and again until none is left.

const { next } = workerData as { next: Int32Array };
parentPort?.once("message", ({ files, base, realBase, maxBytes, chunkFiles }: WorkerJob) => {
  const chunks = Math.ceil(files.length / chunkFiles);
  for (let chunk = Atomics.add(next, 0, 1); chunk < chunks; chunk = Atomics.add(next, 0, 1)) {
    const part = files.slice(chunk * chunkFiles, (chunk + 1) * chunkFiles);
    const reply: ChunkReply = {
      chunk,
      parses: part.map((file) => parseForThread(file, base, realBase, maxBytes)),
    };
    parentPort?.postMessage(reply);
  }
  parentPort?.postMessage({ done: true } satisfies ChunkReply);
});
