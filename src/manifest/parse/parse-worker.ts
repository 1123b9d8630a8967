import { parentPort, workerData } from "node:worker_threads";
import { parseForThread } from "./parse-pool.js";
import type { YamlFile } from "./read-file.js";

// Worker-thread entry (parse-pool.ts): parses one part of a manifest tree and posts plain data back.

const { files, base, realBase, maxBytes } = workerData as {
  files: YamlFile[];
  base: string;
  realBase: string;
  maxBytes: number;
};
parentPort?.postMessage(files.map((file) => parseForThread(file, base, realBase, maxBytes)));
