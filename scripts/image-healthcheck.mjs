/* global console, fetch, AbortSignal -- Node globals in this plain script */
// The image's HEALTHCHECK: GET /livez on the address the controller listens on, read from its
// command line (`--listen HOST:PORT` or `--listen=HOST:PORT`; plumb's default 127.0.0.1:9400), so a
// container started with another --listen is still probed on its own port. A wildcard host
// (0.0.0.0, ::) is reached on loopback. Usage: node healthcheck.mjs [PID] (default 1: the entrypoint).
import { readFileSync } from "node:fs";

const pid = process.argv[2] ?? "1";
const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
const at = args.findIndex((a) => a === "--listen" || a.startsWith("--listen="));
const listen = at < 0 ? "127.0.0.1:9400" : args[at].includes("=") ? args[at].slice(9) : (args[at + 1] ?? "");
const match = /^(?:(.*):)?(\d{1,5})$/.exec(listen.trim());
if (!match) {
  console.error(`healthcheck: cannot read --listen "${listen}"`);
  process.exit(1);
}
const bare = (match[1] ?? "").replace(/^\[(.*)\]$/, "$1");
const host = ["", "0.0.0.0", "::"].includes(bare) ? "127.0.0.1" : bare.includes(":") ? `[${bare}]` : bare;
fetch(`http://${host}:${match[2]}/livez`, { signal: AbortSignal.timeout(2_500) }).then(
  (res) => process.exit(res.ok ? 0 : 1),
  (error) => {
    console.error(`healthcheck: ${error.message}`);
    process.exit(1);
  },
);
