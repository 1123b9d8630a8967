import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startController } from "../../src/controller/controller.js";
import { parseFaultSpec } from "../../src/control-plane/http/faults.js";
import { DEFAULT_TENANT_ID } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { createLogger } from "../../src/logger.js";
import { startReceiver } from "../controller/notify-receiver.js";
import { container, waitFor, writeDoc } from "../controller/support.js";
import { assertBuilt, runCli, spawnCli } from "../support/built-cli.js";
import { startHoldingProxy } from "../support/holding-proxy.js";

// The secret-leak suite (docs/security.md): a unique canary in every secret plumb is given, a
// control plane that echoes every request body in its errors in every form (--faults echo=1), and
// then every output is searched: CLI outputs in each format and at every log level, status files,
// saved plans, the status branch's history (git log -p --all), the controller's logs, /status,
// the status page's data and detail view, and the notifications a local receiver got. Zero
// occurrences; and each channel shows "[redacted]" where the echo was, so the search is not vacuous.

const run = promisify(execFile);
const git = (cwd: string, ...args: string[]) =>
  run("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd, maxBuffer: 64 << 20 });

/**
 * Random hex, characters each encoding changes (quote, slash, space, &, é, <), random hex again:
 * a redactor that stops at the first escape leaves the second half, and the search finds it.
 */
const canary = (tag: string) =>
  `cnry${randomBytes(8).toString("hex")}-${tag}"/ +&é<x>${randomBytes(8).toString("hex")}`;
const CANARIES = {
  literal: canary("literal"),
  env: canary("env"),
  file: canary("file"),
  apiKey: canary("apikey").replace(/[^\w-]/g, "k"), // sent in a header: no space, no é
  gitToken: canary("git"),
  statusToken: canary("status").replace(/[^\w-]/g, "s"),
  notifySecret: canary("notify"),
  webhookSecret: canary("webhook"),
};

/**
 * What is searched for: 12 leading characters (a cut echo), the last 12 (the part after the
 * characters that encodings change), and the value's base64 at each alignment.
 */
function needles(value: string): string[] {
  const out = [value.slice(0, 12), value.slice(-12)];
  for (const pad of ["", "a", "ab"]) {
    const encoded = Buffer.from(pad + value).toString("base64");
    out.push(encoded.slice(4, 16));
  }
  return out;
}

/** Each canary's needles found in `text`, as `name: …context…` (empty when nothing leaked). */
function leaks(text: string): string[] {
  return Object.entries(CANARIES).flatMap(([name, value]) =>
    needles(value)
      .map((needle) => text.indexOf(needle))
      .filter((at) => at >= 0)
      .map((at) => `${name}: …${text.slice(Math.max(0, at - 80), at + 30)}…`),
  );
}

const NAMES = ["alpha", "beta", "gamma"];
const secretsSpec = {
  secrets: [
    { name: "LITERAL", value: CANARIES.literal },
    { name: "FROM_ENV", valueFrom: { env: "LEAK_ENV" } },
    { name: "FROM_FILE", valueFrom: { file: "secret.txt" } },
  ],
};

let tmp: string;
let cp: RunningControlPlane;
let bare: string;
let work: string;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), "plumb-leak-"));
  bare = join(tmp, "manifests.git");
  work = join(tmp, "work");
  await run("git", ["init", "--bare", "-b", "main", bare]);
  await run("git", ["clone", bare, work]);
  await git(work, "checkout", "-B", "main");
  const dir = join(work, "deploy");
  for (const name of NAMES)
    await writeDoc(dir, `${name}.yaml`, container(name, `img/${name}:1`, secretsSpec));
  await writeFile(join(dir, "secret.txt"), `${CANARIES.file}\n`);
  await git(work, "add", ".");
  await git(work, "commit", "-m", "manifests");
  await git(work, "push", "origin", "main");
  cp = await startControlPlane({
    revisionSeconds: 0,
    deploymentReadySeconds: 0,
    apiKeys: [{ key: CANARIES.apiKey, tenants: [DEFAULT_TENANT_ID] }],
    faults: parseFaultSpec("echo=1"),
  });
  assertBuilt();
}, 180_000);
afterAll(async () => {
  await cp?.stop();
  await rm(tmp, { recursive: true, force: true });
});

const env = () => ({
  PLUMB_API_URL: cp.url,
  PLUMB_API_KEY: CANARIES.apiKey,
  LEAK_ENV: CANARIES.env,
  PLUMB_GIT_TOKEN: CANARIES.gitToken,
  PLUMB_STATUS_TOKEN: CANARIES.statusToken,
  PLUMB_LOG_LEVEL: "trace",
  HOME: tmp,
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.com",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.com",
});

/** Every file under `dir` (status records, saved plans) with its mode. */
async function filesUnder(dir: string): Promise<Array<{ path: string; text: string; mode: number }>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  const files = entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
  return Promise.all(
    files.map(async (path) => ({
      path,
      text: await readFile(path, "utf8"),
      mode: (await stat(path)).mode & 0o777,
    })),
  );
}

describe("no secret leaves plumb through a server that echoes request bodies", () => {
  it("the CLI: every command and format, logs at trace, status files, saved plan, status branch", async () => {
    const dir = join(work, "deploy");
    const outputs: Record<string, string> = {};
    const cli = async (label: string, args: string[], extra: Record<string, string> = {}) => {
      const result = await runCli(args, { ...env(), ...extra }, work);
      outputs[label] = `exit ${result.code}\n${result.output}`;
      return result;
    };
    await cli("validate", ["validate", dir]);
    for (const output of ["text", "json", "markdown"]) {
      await cli(`plan ${output}`, [
        "plan",
        dir,
        "--output",
        output,
        "--out",
        join(tmp, `plan-${output}.json`),
      ]);
      const applied = await cli(`apply ${output}`, [
        "apply",
        dir,
        "--yes",
        "--output",
        output,
        "--status-branch",
        "plumb-status",
        "--timeout",
        "20s",
      ]);
      expect(applied.code, outputs[`apply ${output}`]).not.toBe(0); // every create was refused with an echo
      await cli(`drift ${output}`, ["drift", dir, "--output", output]);
    }
    await cli("apply json logs", ["apply", dir, "--yes", "--output", "json"], { PLUMB_LOG_FORMAT: "json" });
    await cli("status text", ["status", dir]);
    await cli("status json", ["status", dir, "--output", "json"]);
    await cli("apply --plan", ["apply", dir, "--yes", "--plan", join(tmp, "plan-json.json")]);

    for (const [label, text] of Object.entries(outputs)) expect(leaks(text), label).toEqual([]);
    // The server's echoes reached plumb and were redacted (else this suite proves nothing).
    const applies = Object.entries(outputs).filter(([label]) => label.startsWith("apply"));
    for (const [label, text] of applies) expect(text, label).toContain("[redacted]");
    // All three echo styles were seen: a 400 detail, a 422 issue list and a plain-text 400.
    const all = Object.values(outputs).join("\n");
    for (const seen of ["failed: 400 — bad request", "control plane (422)", "failed: 400 — Bad Request"])
      expect(all).toContain(seen);

    const files = [
      ...(await filesUnder(join(dir, ".plumb"))),
      ...(await filesUnder(tmp)).filter((f) => /plan-\w+\.json$/.test(f.path)),
    ];
    expect(files.length).toBeGreaterThan(NAMES.length);
    for (const file of files) expect(leaks(file.text), file.path).toEqual([]);
    const records = files.filter((f) => f.path.includes(".plumb/status/"));
    expect(records.map((f) => f.text).join("\n")).toContain("[redacted]");
    // Status records and saved plans are owner-only (they hold salted fingerprints).
    const owned = files.filter((f) => f.path.includes("/.plumb/status/") || /plan-\w+\.json$/.test(f.path));
    for (const file of owned) expect(file.mode, file.path).toBe(0o600);

    // Every ref but the manifests' own commits (which hold the literal value and the secret file).
    const history = (await git(bare, "log", "-p", "--all", "--decorate", "^main")).stdout;
    expect(history).toContain("plumb-status"); // the branch was pushed
    expect(history).toContain("[redacted]");
    expect(leaks(history)).toEqual([]);
  }, 240_000);

  it("verify: an agent server that repeats a secret in its answer", async () => {
    // A healthy control plane whose agent server echoes what it is asked (its simulated graph): the
    // check makes it say a secret value, as an agent that prints its environment would.
    const healthy = await startControlPlane({
      revisionSeconds: 0,
      deploymentReadySeconds: 0,
      runSeconds: 0,
      apiKeys: [{ key: CANARIES.apiKey, tenants: [DEFAULT_TENANT_ID] }],
    });
    try {
      const dir = join(tmp, "verify");
      const verify = {
        assistant_id: "agent",
        // In three parts, so the manifest (and the plan that shows it) never holds the value whole.
        input: {
          messages: [
            {
              role: "user",
              content: [0, 6, CANARIES.env.length - 6].map((start, i, cuts) => ({
                type: "text",
                text: CANARIES.env.slice(start, cuts[i + 1]),
              })),
            },
          ],
        },
        expect_contains: "pong",
        timeout_seconds: 10,
      };
      await writeDoc(dir, "delta.yaml", container("delta", "img/delta:1", { ...secretsSpec, verify }));
      await writeFile(join(dir, "secret.txt"), `${CANARIES.file}\n`);
      const outputs: string[] = [];
      for (const output of ["text", "json", "markdown"]) {
        const result = await runCli(["apply", dir, "--yes", "--output", output, "--timeout", "20s"], {
          ...env(),
          PLUMB_API_URL: healthy.url,
        });
        expect(result.code, result.output).toBe(1); // the answer does not contain "pong"
        outputs.push(result.output);
      }
      const records = await filesUnder(join(dir, ".plumb"));
      const all = [...outputs, ...records.map((f) => f.text)].join("\n");
      expect(leaks(all)).toEqual([]);
      expect(outputs.join("\n")).toContain("[redacted]"); // the answer, shown redacted
    } finally {
      await healthy.stop();
    }
  }, 120_000);

  it("crash paths: apply killed (SIGKILL) while creating, stopped (SIGTERM) while waiting", async () => {
    const slow = await startControlPlane({
      revisionSeconds: 30,
      deploymentReadySeconds: 0,
      apiKeys: [{ key: CANARIES.apiKey, tenants: [DEFAULT_TENANT_ID] }],
    });
    const proxy = await startHoldingProxy(slow.url);
    try {
      const dir = join(tmp, "crash");
      await writeDoc(dir, "eta.yaml", container("eta", "img/eta:1", secretsSpec));
      await writeFile(join(dir, "secret.txt"), `${CANARIES.file}\n`);
      const start = () =>
        spawnCli(["apply", dir, "--yes", "--timeout", "60s"], { ...env(), PLUMB_API_URL: proxy.url });
      // Killed with the create in flight: the write-ahead record stays behind.
      const create = proxy.hold((method, url) => method === "POST" && url.startsWith("/v2/deployments"));
      const killed = start();
      const held = await Promise.race([create, killed.exited.then(() => null)]);
      expect(held, killed.output()).not.toBeNull();
      killed.child.kill("SIGKILL");
      await killed.exited;
      await held!.forward();
      const afterKill = await filesUnder(join(dir, ".plumb"));
      expect(afterKill.some((f) => f.text.includes('"pending"'))).toBe(true);
      // Stopped while waiting for the revision: the interrupted report and its records.
      const waiting = proxy.watch((method, url) => method === "GET" && url.includes("/revisions/"));
      const stopped = start();
      await Promise.race([waiting, stopped.exited]);
      stopped.child.kill("SIGTERM");
      await stopped.exited;
      const records = [...afterKill, ...(await filesUnder(join(dir, ".plumb")))];
      const all = [killed.output(), stopped.output(), ...records.map((f) => f.text)].join("\n");
      expect(stopped.output()).toMatch(/interrupt/i);
      expect(leaks(all)).toEqual([]);
    } finally {
      await proxy.close();
      await slow.stop();
    }
  }, 120_000);

  it("the controller: logs at trace, /status, the page's data and detail, notifications, status branch", async () => {
    const receiver = await startReceiver();
    const chunks: string[] = [];
    const logger = createLogger(
      { level: "trace", name: "plumb-controller" },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          chunks.push(chunk.toString());
          done();
        },
      }),
    );
    // Counts what the server really said: the canaries were in its answers, plumb removed them.
    let echoed = 0;
    const watching: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (response.status >= 400) {
        const text = await response.clone().text();
        if (text.includes(CANARIES.literal.slice(0, 12))) echoed += 1;
      }
      return response;
    };
    const controller = await startController({
      source: {
        kind: "git",
        url: bare,
        branch: "main",
        path: "deploy",
        workDir: join(tmp, "checkout"),
        intervalMs: 3_600_000,
      },
      api: { apiUrl: cp.url, apiKey: CANARIES.apiKey, platformUrl: cp.url },
      statusBranch: "plumb-controller-status",
      listen: { host: "127.0.0.1", port: 0 },
      statusToken: CANARIES.statusToken,
      webhookSecret: CANARIES.webhookSecret,
      notify: { urls: [receiver.url], secret: CANARIES.notifySecret },
      selfHeal: false,
      concurrency: 3,
      debounceMs: 10,
      backoffBaseMs: 50,
      backoffMaxMs: 200,
      timeoutMs: 10_000,
      pollIntervalMs: 10,
      maxPollIntervalMs: 50,
      env: { ...env(), PATH: process.env.PATH },
      logger,
      fetch: watching,
    });
    try {
      const url = controller.url!;
      await waitFor(
        "every object failed and was announced",
        () => receiver.deliveries.length >= NAMES.length,
        20_000,
      );
      const get = async (path: string) => {
        const res = await fetch(`${url}${path}`, {
          headers: { authorization: `Bearer ${CANARIES.statusToken}` },
        });
        return `${path} ${res.status}\n${await res.text()}`;
      };
      const served = [
        await get("/status"),
        await get("/ui/api/header"),
        await get("/ui/api/objects"),
        ...(await Promise.all(NAMES.map((name) => get(`/ui/api/objects/Deployment/${name}`)))),
      ];
      await controller.stop(1_000); // publishes the status branch
      const history = (await git(bare, "log", "-p", "--all", "--decorate", "^main")).stdout;
      const notifications = receiver.deliveries.map((d) => `${JSON.stringify(d.headers)}\n${d.body}`);
      const channels: Record<string, string> = {
        logs: chunks.join(""),
        served: served.join("\n"),
        notifications: notifications.join("\n"),
        history,
        records: (await filesUnder(join(tmp, "checkout")))
          .filter((f) => f.path.includes("/.plumb/status/"))
          .map((f) => f.text)
          .join("\n"),
      };
      expect(echoed).toBeGreaterThan(0);
      for (const [channel, text] of Object.entries(channels)) expect(leaks(text), channel).toEqual([]);
      expect(channels.records).toContain('"last_error"');
      for (const channel of ["logs", "served", "notifications", "history", "records"])
        expect(channels[channel], channel).toContain("[redacted]");
      expect(history).toContain("plumb-controller-status");
    } finally {
      await controller.stop(1_000);
      await receiver.close();
    }
  }, 120_000);
});
