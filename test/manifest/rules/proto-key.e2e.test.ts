import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../../src/control-plane/server.js";
import { assertBuilt, runCli } from "../../support/built-cli.js";

// A `__proto__` key anywhere in a manifest: the control plane answers 422 to a body holding one
// (docs/control-plane.md "Limits on what a client can send"), so validate refuses it first, at its
// file:line:col, and plan and apply send nothing at all (counted on the control plane's request log).

const MANIFEST = `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: alpha
  labels:
    "__proto__": evil
spec:
  source: internal_container
  source_revision_config:
    image_uri: registry.example.com/agent:1
  secrets: []
  source_config:
    install_command: null
`;
const CONTAINER = `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: beta
spec:
  source: external_container
  source_config:
    listener_id: 10000000-0000-4000-8000-000000000001
    resource_spec:
      annotations: {team: a, __proto__: {polluted: true}}
  source_revision_config:
    image_uri: registry.example.com/agent:1
  secrets: []
`;

let dir: string;
let alone: string; // alpha only: its __proto__ label passes the schema (labels take any key)
let cp: RunningControlPlane;
const requests: string[] = [];
beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(join(tmpdir(), "plumb-proto-"));
  await writeFile(join(dir, "alpha.yaml"), MANIFEST);
  await writeFile(join(dir, "beta.yaml"), CONTAINER);
  alone = await mkdtemp(join(tmpdir(), "plumb-proto-alone-"));
  await writeFile(join(alone, "alpha.yaml"), MANIFEST);
  const logger = pino({ level: "info" }, { write: (line: string) => void requests.push(line) });
  cp = await startControlPlane({ mode: "self-hosted", logger });
  requests.length = 0; // the "listening" line
});
afterAll(async () => {
  await cp.stop();
  await rm(dir, { recursive: true, force: true });
  await rm(alone, { recursive: true, force: true });
});

describe("a __proto__ key in a manifest", () => {
  it("validate refuses it at file:line:col, in a map of metadata and of a flow mapping", async () => {
    const { code, output } = await runCli(["validate", dir], {});
    expect(code).toBe(1);
    expect(output).toContain(
      "alpha.yaml:6:5: error: metadata.labels.__proto__: the key __proto__ is not allowed",
    );
    expect(output).toContain(
      "beta.yaml:10:30: error: spec.source_config.resource_spec.annotations.__proto__: the key __proto__ is not allowed",
    );
    expect(output.match(/\[proto-key\]/g)).toHaveLength(2);
  });

  it("plan stops on it before any request reaches the control plane", async () => {
    const env = { PLUMB_API_URL: cp.url, PLUMB_API_KEY: DEFAULT_API_KEY };
    const { code, output } = await runCli(["plan", alone], env);
    expect(code, output).not.toBe(0);
    expect(output).toContain("__proto__");
    expect(requests).toEqual([]);
  });
});
