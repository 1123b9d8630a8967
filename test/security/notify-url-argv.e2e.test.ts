import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { startReceiver } from "../controller/notify-receiver.js";
import { container, waitFor, writeDoc } from "../controller/support.js";
import { assertBuilt, type CliRun, runCli, spawnCli } from "../support/built-cli.js";

// A --notify URL is a credential (Slack's carries its token in the path), and argv is what ps,
// shell history and CI logs show. The built controller takes the URLs from --notify-file or
// PLUMB_NOTIFY_URLS, warns (naming the origin only) when one is given on the command line, and
// never prints a receiver's path (docs/security.md, "Secrets on the command line").

let cp: RunningControlPlane;
let dir: string;
const running: CliRun[] = [];

beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(join(tmpdir(), "plumb-notify-argv-"));
  cp = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
});
afterEach(async () => {
  for (const run of running.splice(0)) {
    run.child.kill("SIGKILL");
    await run.exited;
  }
});
afterAll(async () => {
  await cp?.stop();
  await rm(dir, { recursive: true, force: true });
});

const hookToken = () => `hook${randomBytes(12).toString("hex")}`;
const env = { PLUMB_API_KEY: DEFAULT_API_KEY, PLUMB_LOG_LEVEL: "trace" };

/** A controller over a deployment of its own (its create is the `applied` event), told `extra`. */
async function controller(extra: string[], more: Record<string, string> = {}): Promise<CliRun> {
  const deploy = await mkdtemp(join(dir, "deploy-"));
  const name = `d${randomBytes(4).toString("hex")}`;
  await writeDoc(deploy, `${name}.yaml`, container(name, `img/${name}:1`));
  const run = spawnCli(["controller", "--dir", deploy, "--listen", "127.0.0.1:0", ...extra], {
    ...env,
    PLUMB_API_URL: cp.url,
    ...more,
  });
  running.push(run);
  return run;
}

const WARNING = "--notify on the command line: a webhook URL is a credential";

describe("notification URLs stay out of argv, logs and errors", () => {
  it("--notify-file: delivers to each URL in the file, says nothing of their paths", async () => {
    const receiver = await startReceiver();
    try {
      const [one, two] = [hookToken(), hookToken()];
      const file = join(dir, "notify.txt");
      await writeFile(
        file,
        `# receivers\n${receiver.url}/services/T0/B0/${one}\n\n  ${receiver.url}/b/${two}  \n`,
        { mode: 0o600 },
      );
      const run = await controller(["--notify-file", file]);
      await waitFor(
        "both receivers got the applied event",
        () => new Set(receiver.deliveries.map((d) => d.path)).size === 2,
        30_000,
      );
      expect(receiver.deliveries.map((d) => d.path).sort()).toEqual(
        [`/b/${two}`, `/services/T0/B0/${one}`].sort(),
      );
      expect(run.output()).not.toContain(WARNING);
      for (const token of [one, two]) expect(run.output()).not.toContain(token);
    } finally {
      await receiver.close();
    }
  }, 60_000);

  it("PLUMB_NOTIFY_URLS: white-space separated URLs from the environment", async () => {
    const receiver = await startReceiver();
    try {
      const [one, two] = [hookToken(), hookToken()];
      const run = await controller([], {
        PLUMB_NOTIFY_URLS: `${receiver.url}/x/${one}\n${receiver.url}/y/${two}`,
      });
      await waitFor(
        "both receivers got the applied event",
        () => new Set(receiver.deliveries.map((d) => d.path)).size === 2,
        30_000,
      );
      expect(run.output()).not.toContain(WARNING);
      for (const token of [one, two]) expect(run.output()).not.toContain(token);
    } finally {
      await receiver.close();
    }
  }, 60_000);

  it("--notify URL still works, with a warning that names the origin, never the path", async () => {
    const receiver = await startReceiver();
    try {
      const token = hookToken();
      const run = await controller(["--notify", `${receiver.url}/services/${token}`]);
      await waitFor("the applied event", () => receiver.deliveries.length > 0, 30_000);
      await waitFor("the warning", () => run.output().includes(WARNING), 10_000);
      const line = run
        .output()
        .split("\n")
        .find((l) => l.includes(WARNING))!;
      expect(line).toContain(receiver.url); // the origin: which receiver
      expect(run.output()).not.toContain(token);
    } finally {
      await receiver.close();
    }
  }, 60_000);

  it("a bad line of --notify-file is named by file and line, not quoted", async () => {
    const token = hookToken();
    const file = join(dir, "bad.txt");
    await writeFile(file, `http://127.0.0.1:9/ok\nftp://hooks.example/${token}\n`);
    const bad = await runCli(["controller", "--dir", dir, "--listen", "127.0.0.1:0", "--notify-file", file], {
      ...env,
      PLUMB_API_URL: cp.url,
    });
    expect(bad.code).toBe(64);
    expect(bad.output).toContain(`--notify-file ${file}:2 expects an http(s) URL`);
    expect(bad.output).not.toContain(token);
    const empty = join(dir, "empty.txt");
    await writeFile(empty, "# nothing yet\n");
    const none = await runCli(
      ["controller", "--dir", dir, "--listen", "127.0.0.1:0", "--notify-file", empty],
      { ...env, PLUMB_API_URL: cp.url },
    );
    expect(none.output).toContain("names no URL");
    expect(none.code).toBe(64);
  }, 60_000);

  it("--public-url with a user or password is refused unquoted: every notification links to it", async () => {
    const token = hookToken();
    const result = await runCli(
      ["controller", "--dir", dir, "--public-url", `https://ops:${token}@plumb.example`],
      { ...env, PLUMB_API_URL: cp.url },
    );
    expect(result.code).toBe(64);
    expect(result.output).toContain("--public-url must not carry a user or password");
    expect(result.output).not.toContain(token);
  }, 30_000);
});
