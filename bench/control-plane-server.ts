import { createLogger } from "../src/logger.js";
import { startControlPlane } from "../src/control-plane/server.js";

// The server side of bench/control-plane.bench.ts, run in its own process (`fork`, with
// --expose-gc) so the load generator does not share its event loop. It answers IPC messages:
// "cpu" → CPU microseconds used so far (user + system); "memory" → RSS and heap after a full GC;
// "stop" → stops and exits.
// argv[2]: "memory" | a data directory; argv[3]: "log" to log every request as the CLI does.

const dataDir = process.argv[2] === "memory" ? undefined : process.argv[2];
const logging = process.argv[3] === "log";
const devNull = { write: () => true } as unknown as NodeJS.WritableStream;

const cp = await startControlPlane({
  dataDir,
  revisionSeconds: 0,
  // The limiter still runs on every request; only its budget is out of the way.
  rateLimits: { "Default (API key)": { count: 1e12, intervalSeconds: 10 } },
  logger: logging ? createLogger({ name: "control-plane", level: "info" }, devNull) : false,
});

process.on("message", (message: unknown) => {
  if (message === "cpu") {
    const { user, system } = process.cpuUsage();
    process.send?.({ micros: user + system });
  } else if (message === "memory") {
    global.gc?.();
    const { rss, heapUsed } = process.memoryUsage();
    process.send?.({ rss, heapUsed, gc: typeof global.gc === "function" });
  } else if (message === "stop") {
    void cp.stop().then(() => process.exit(0));
  }
});
process.send?.({ url: cp.url });
