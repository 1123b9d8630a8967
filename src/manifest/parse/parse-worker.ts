import { parentPort, workerData } from "node:worker_threads";
import { type ChunkReply, parseForThread } from "./parse-pool.js";
import type { YamlFile } from "./read-file.js";

// Worker-thread entry (parse-pool.ts): takes the next chunk of the tree not yet taken, parses it,
// posts it as plain data, and again until none is left.

const { files, base, realBase, maxBytes, next, chunkFiles } = workerData as {
  files: YamlFile[];
  base: string;
  realBase: string;
  maxBytes: number;
  next: Int32Array;
  chunkFiles: number;
};
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
