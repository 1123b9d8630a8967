import { spawn } from "node:child_process";
import { PlumbError } from "../../errors.js";

// Many small files of one ref read by one git process (`git cat-file --batch`), instead of one
// `git show` each: the stores below a tree on the status branch hold a record per object
// (1,000 records: ~0.1 s this way, several seconds as 1,000 processes).

/** All the records read at once: 10,000 records of a few KB are ~30 MB. */
const MAX_BATCH_BYTES = 256 * 1024 * 1024;

/**
 * The text of each of `specs` (`REF:PATH`) in the repository at `cwd`, in order; null for one that
 * is missing or not a file. `env`: the git commands' environment (default: this process's).
 */
export function readBlobs(
  cwd: string,
  env: Record<string, string> | undefined,
  specs: readonly string[],
  maxBytes = MAX_BATCH_BYTES,
): Promise<(string | null)[]> {
  if (specs.length === 0) return Promise.resolve([]);
  return new Promise((resolve, reject) => {
    const git = spawn("git", ["cat-file", "--batch"], { cwd, env: env ?? process.env, stdio: "pipe" });
    const chunks: Buffer[] = [];
    let bytes = 0;
    git.stdout.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      // A branch anyone can push to may hold a file of gigabytes where a record should be.
      if (bytes > maxBytes) {
        git.kill();
        reject(
          new PlumbError(
            "status-branch-read-failed",
            `the status records on the branch are larger than ${maxBytes} bytes in all: a file that is not a record was pushed under .plumb/status/; remove it from the status branch`,
          ),
        );
      } else chunks.push(chunk);
    });
    git.on("error", reject);
    git.on("close", (code) => {
      if (bytes > maxBytes) return;
      if (code !== 0) reject(new Error(`git cat-file --batch exited with ${code}`));
      else resolve(parseBatch(Buffer.concat(chunks), specs.length));
    });
    git.stdin.on("error", reject);
    // A spec is one line: a path holding a newline cannot be asked for (it reads as missing).
    git.stdin.end(specs.map((s) => (s.includes("\n") ? "" : s)).join("\n") + "\n");
  });
}

/** `<oid> <type> <size>\n<content>\n` per spec, or `<spec> missing\n` (and the like) for none. */
function parseBatch(out: Buffer, count: number): (string | null)[] {
  const texts: (string | null)[] = [];
  let at = 0;
  while (texts.length < count && at < out.length) {
    const end = out.indexOf(0x0a, at);
    if (end < 0) break;
    const [, type, size] = out.subarray(at, end).toString("utf8").split(" ");
    at = end + 1;
    const bytes = Number(size);
    if (!Number.isInteger(bytes) || type === undefined) {
      texts.push(null);
      continue;
    }
    texts.push(type === "blob" ? out.subarray(at, at + bytes).toString("utf8") : null);
    at += bytes + 1;
  }
  while (texts.length < count) texts.push(null);
  return texts;
}
