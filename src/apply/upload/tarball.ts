import { gzipSync } from "node:zlib";
import { comparePaths, type SourceFile } from "../../manifest/source/source-digest.js";

// A deterministic gzip tarball (POSIX ustar, pax headers for long paths) of the files plumb has
// already read and digested. Written here rather than with the `tar` package: tar packs from the
// file system (a second read that could differ from what was digested) and needs several options
// to be reproducible; these files are in memory and the format is ~80 lines.

const BLOCK = 512;
/** Fixed metadata: the same content always gives the same bytes. */
const MTIME = 0;

function octal(value: number, width: number): string {
  // width - 1 octal digits and a NUL, as ustar readers expect.
  return `${value.toString(8).padStart(width - 1, "0")}\0`;
}

function header(name: string, prefix: string, mode: number, size: number, type: "0" | "5" | "x"): Buffer {
  const block = Buffer.alloc(BLOCK);
  block.write(name, 0, 100, "utf8");
  block.write(octal(mode, 8), 100, "ascii");
  block.write(octal(0, 8), 108, "ascii"); // uid
  block.write(octal(0, 8), 116, "ascii"); // gid
  block.write(octal(size, 12), 124, "ascii");
  block.write(octal(MTIME, 12), 136, "ascii");
  block.write("        ", 148, "ascii"); // checksum placeholder: eight spaces
  block.write(type, 156, "ascii");
  block.write("ustar\u000000", 257, "binary");
  block.write(prefix, 345, 155, "utf8");
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "ascii");
  return block;
}

const padding = (size: number) => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);

/** Splits a path into ustar prefix (≤ 155 bytes) and name (≤ 100 bytes); null when it cannot. */
function split(path: string): { prefix: string; name: string } | null {
  if (Buffer.byteLength(path) <= 100) return { prefix: "", name: path };
  for (let i = path.indexOf("/"); i !== -1; i = path.indexOf("/", i + 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100) return { prefix, name };
  }
  return null;
}

/** A pax record "LEN path=VALUE\n", where LEN counts the whole record, itself included. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body);
  while (Buffer.byteLength(`${length}${body}`) !== length) length = Buffer.byteLength(`${length}${body}`);
  return `${length}${body}`;
}

function entry(path: string, mode: number, type: "0" | "5", bytes: Uint8Array = new Uint8Array()): Buffer[] {
  const parts = split(path);
  if (parts)
    return [
      header(parts.name, parts.prefix, mode, bytes.length, type),
      Buffer.from(bytes),
      padding(bytes.length),
    ];
  const pax = Buffer.from(paxRecord("path", path));
  const short = Buffer.from(path)
    .subarray(0, 99)
    .toString("utf8")
    .replace(/\uFFFD+$/, "");
  return [
    header("PaxHeader", "", 0o644, pax.length, "x"),
    pax,
    padding(pax.length),
    header(short, "", mode, bytes.length, type),
    Buffer.from(bytes),
    padding(bytes.length),
  ];
}

/** The .tar.gz of `files` (paths relative to the source directory), directories listed before their files. */
export function buildTarball(files: readonly SourceFile[]): Buffer {
  const chunks: Buffer[] = [];
  const directories = new Set<string>();
  for (const file of [...files].sort((a, b) => comparePaths(a.path, b.path))) {
    const segments = file.path.split("/");
    for (let i = 1; i < segments.length; i++) {
      const dir = `${segments.slice(0, i).join("/")}/`;
      if (directories.has(dir)) continue;
      directories.add(dir);
      chunks.push(...entry(dir, 0o755, "5"));
    }
    chunks.push(...entry(file.path, file.mode, "0", file.bytes));
  }
  chunks.push(Buffer.alloc(BLOCK * 2));
  return gzipSync(Buffer.concat(chunks), { level: 9 });
}
