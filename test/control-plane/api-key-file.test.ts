import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readKeySources } from "../../src/cli/control-plane/api-key-files.js";
import { controlPlaneCommand } from "../../src/cli/control-plane/control-plane.js";
import { DEFAULT_API_KEY, DEFAULT_TENANT_ID } from "../../src/control-plane/options.js";

// plumb control-plane --api-key-file FILE (repeatable, KEY[=TENANT] per line): keys off the command
// line, accepted as given; --api-key still works and is warned about.

const KEY_A = "Zq9xK3vW7pL2mN8rT4yB6cH1jF5dG0sA";
const KEY_B = "Mh4tR8wQ2nV6cX1zL9pK3jB7fD5gS0yE";
const TENANT = "11111111-0000-4000-8000-000000000001";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-cp-keys-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Runs the real command until its banner is out, then stops it; what it printed and what it accepted. */
async function serve(
  args: string[],
  probe: (url: string, hangUp: () => void) => Promise<void> = async () => undefined,
) {
  let out = "";
  let err = "";
  let stop!: (signal: string) => void;
  const stopped = new Promise<string>((resolve) => (stop = resolve));
  // The command's SIGHUP subscription, taken here: the probe sends the "signal" by calling it.
  let hangUp = () => undefined as void;
  const command = controlPlaneCommand(
    { write: (t: string) => (out += t) },
    () => stopped,
    {},
    { write: (t: string) => (err += t) },
    (reload) => {
      hangUp = reload;
      return () => (hangUp = () => undefined);
    },
  );
  const level = process.env.PLUMB_LOG_LEVEL;
  process.env.PLUMB_LOG_LEVEL = "silent";
  const running = command.parseAsync(["--port", "0", ...args], { from: "user" });
  try {
    await expect.poll(() => out, { interval: 5 }).toContain("state:");
    await probe(/listening on (\S+)/.exec(out)?.[1] ?? "", () => hangUp());
  } finally {
    stop("SIGTERM");
    await running;
    if (level === undefined) delete process.env.PLUMB_LOG_LEVEL;
    else process.env.PLUMB_LOG_LEVEL = level;
  }
  return { out, err };
}

const status = async (url: string, key: string, tenant?: string) =>
  (
    await fetch(`${url}/v2/deployments`, {
      headers: { "x-api-key": key, ...(tenant ? { "x-tenant-id": tenant } : {}) },
    })
  ).status;

describe("plumb control-plane --api-key-file", () => {
  it("accepts the keys of each file for their tenants, names them by file and line, warns about nothing", async () => {
    const first = join(dir, "keys-1");
    const second = join(dir, "keys-2");
    await writeFile(first, `# CI keys\n\n${KEY_A}=${TENANT}\n`);
    await writeFile(second, `${KEY_B}\n`);
    const { out, err } = await serve(["--api-key-file", first, "--api-key-file", second], async (url) => {
      expect(await status(url, KEY_A)).toBe(200);
      expect(await status(url, KEY_B)).toBe(200);
      expect(await status(url, DEFAULT_API_KEY)).toBe(401); // keys given: the development key is not
    });
    expect(out).toContain(
      `  accepts API key (key from --api-key-file ${first} line 3, 32 characters) for tenant(s) ${TENANT}`,
    );
    expect(out).toContain(
      `(key from --api-key-file ${second} line 1, 32 characters) for tenant(s) ${DEFAULT_TENANT_ID}`,
    );
    expect(`${out}${err}`).not.toContain(KEY_A.slice(0, 6));
    expect(err).toBe("");
  });

  it("reads its files again on SIGHUP: a key rotated in, a key revoked, a broken file changing nothing", async () => {
    const file = join(dir, "keys-rotated");
    await writeFile(file, `${KEY_A}\n`);
    const { err } = await serve(["--api-key-file", file], async (url, hangUp) => {
      expect(await status(url, KEY_A)).toBe(200);
      expect(await status(url, KEY_B)).toBe(401);
      await writeFile(file, `${KEY_B}\n`); // rotated: A revoked, B granted
      hangUp();
      expect(await status(url, KEY_A)).toBe(401);
      expect(await status(url, KEY_B)).toBe(200);
      await writeFile(file, "# emptied by mistake\n");
      hangUp();
      expect(await status(url, KEY_B)).toBe(200); // the keys granted before stay
    });
    expect(err).toContain("SIGHUP: API keys read again: 1 accepted");
    expect(err).toContain(
      `SIGHUP: --api-key-file ${file} holds no key; write one KEY[=TENANT] per line; the keys granted before stay`,
    );
    expect(err).not.toContain(KEY_A.slice(0, 6));
    expect(err).not.toContain(KEY_B.slice(0, 6));
  });

  it("refuses to listen beyond loopback with only the development key; with keys of one's own it may", async () => {
    const open = controlPlaneCommand(
      { write: () => true },
      () => Promise.resolve("SIGTERM"),
      {},
      { write: () => true },
    );
    await expect(open.parseAsync(["--host", "0.0.0.0", "--port", "0"], { from: "user" })).rejects.toThrow(
      /--host 0\.0\.0\.0 listens beyond this machine, where the documented development key plumb-local-key lets anyone in: give keys of your own with --api-key-file FILE/,
    );
    const explicit = controlPlaneCommand(
      { write: () => true },
      () => Promise.resolve("SIGTERM"),
      {},
      { write: () => true },
    );
    await expect(
      explicit.parseAsync(["--host", "10.0.0.1", "--port", "0", "--api-key", DEFAULT_API_KEY], {
        from: "user",
      }),
    ).rejects.toThrow(/listens beyond this machine/);
    // Any loopback address is this machine's only: the development key stays fine there.
    const { out } = await serve(["--host", "127.0.0.2"], async (url) => {
      expect(await status(url, DEFAULT_API_KEY)).toBe(200);
    });
    expect(out).toContain("listening on http://127.0.0.2:");
  });

  it("warns when a key comes on the command line, and not for the development key", async () => {
    const chosen = await serve(["--api-key", KEY_A]);
    expect(chosen.err).toMatch(/warning: --api-key puts keys on the command line.*--api-key-file FILE/);
    expect(chosen.err).not.toContain(KEY_A.slice(0, 6));
    expect((await serve(["--api-key", DEFAULT_API_KEY])).err).toBe("");
  });

  it("refuses an unreadable or empty file and a line without a key, naming the line and never a key", () => {
    const files: Record<string, string> = { empty: "# nothing\n\n", bad: `${KEY_A}\n=${TENANT}\n` };
    const read = (path: string) => {
      if (!(path in files)) throw Object.assign(new Error("no"), { code: "ENOENT" });
      return files[path]!;
    };
    expect(() => readKeySources({ apiKeyFile: ["missing"] }, read)).toThrow(
      "cannot read --api-key-file missing (ENOENT)",
    );
    expect(() => readKeySources({ apiKeyFile: ["empty"] }, read)).toThrow(
      "--api-key-file empty holds no key",
    );
    expect(() => readKeySources({ apiKeyFile: ["bad"] }, read)).toThrow(
      "--api-key-file bad line 2 needs KEY or KEY=TENANT_ID",
    );
    expect(
      readKeySources({ apiKey: [`${KEY_B}=${TENANT},${DEFAULT_TENANT_ID}`], apiKeyFile: ["bad"] }, (p) =>
        p === "bad" ? `${KEY_A}\n` : "",
      ),
    ).toEqual([
      { grant: { key: KEY_B, tenants: [TENANT, DEFAULT_TENANT_ID] }, from: "--api-key #1" },
      { grant: { key: KEY_A, tenants: [DEFAULT_TENANT_ID] }, from: "--api-key-file bad line 1" },
    ]);
  });
});
