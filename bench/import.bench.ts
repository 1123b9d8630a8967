import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runImport } from "../src/cli/adopt/import.js";
import { DEFAULT_API_KEY, DEFAULT_LISTENER_ID } from "../src/control-plane/options.js";
import { startControlPlane } from "../src/control-plane/server.js";

// Issue 11: 1,000 live deployments import in under 5 s with at most 12 requests. The baseline,
// measured in the same run, is one listing of the same 1,000 (the requests import cannot avoid).

const COUNT = 1000;
const TARGET_MS = 5000;
const MAX_REQUESTS = 12;

export async function run(): Promise<string[]> {
  const cp = await startControlPlane({
    mode: "self-hosted",
    revisionSeconds: 0,
    deploymentReadySeconds: 0,
    rateLimits: { "Default (API key)": { count: 1e9, intervalSeconds: 10 } },
  });
  const out = await mkdtemp(join(tmpdir(), "plumb-bench-import-"));
  const headers = { "x-api-key": DEFAULT_API_KEY, "content-type": "application/json" };
  try {
    for (let i = 0; i < COUNT; i += 50)
      await Promise.all(
        Array.from({ length: 50 }, (_, k) =>
          fetch(`${cp.url}/v2/deployments`, {
            method: "POST",
            headers,
            body: JSON.stringify({
              name: `agent-${i + k}`,
              source: "external_container",
              source_config: { listener_id: DEFAULT_LISTENER_ID, resource_spec: { cpu: 0.5, min_scale: 1 } },
              source_revision_config: { image_uri: `registry.example/agent-${i + k}:1` },
              secrets: [{ name: "OPENAI_API_KEY", value: "sk" }],
            }),
          }),
        ),
      );
    let started = performance.now();
    for (let offset = 0; ; offset += 100) {
      const page = (await (
        await fetch(`${cp.url}/v2/deployments?limit=100&offset=${offset}`, { headers })
      ).json()) as {
        resources: unknown[];
      };
      if (page.resources.length < 100) break;
    }
    const listMs = performance.now() - started;
    let requests = 0;
    const counting: typeof fetch = (input, init) => {
      requests++;
      return fetch(input, init);
    };
    const quiet = { write: () => true };
    started = performance.now();
    await runImport(
      { out, name: [] },
      {
        stdout: quiet,
        stderr: quiet,
        env: { PLUMB_API_URL: cp.url, PLUMB_API_KEY: DEFAULT_API_KEY },
        fetch: counting,
      },
    );
    const ms = performance.now() - started;
    const verdict = ms < TARGET_MS && requests <= MAX_REQUESTS ? "ok" : "OVER TARGET";
    return [
      `import ${COUNT} deployments: ${ms.toFixed(0)} ms, ${requests} requests (target < ${TARGET_MS} ms, ≤ ${MAX_REQUESTS} requests) ${verdict}`,
      `  baseline: listing the same ${COUNT} takes ${listMs.toFixed(0)} ms (${(ms / listMs).toFixed(1)}x)`,
    ];
  } finally {
    await cp.stop();
    await rm(out, { recursive: true, force: true });
  }
}
