import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runApply } from "../src/cli/sync/apply.js";
import { DEFAULT_API_KEY } from "../src/control-plane/options.js";

// What the apply benches share: many changed deployments, and `plumb apply --yes` with no output.

/** `n` internal_container deployments `PREFIX-i` with image tag `tag`, in one file under `root`. */
export async function writeContainerManifests(root: string, n: number, prefix: string, tag: string) {
  const manifest = (i: number) =>
    [
      "apiVersion: plumb/v1",
      "kind: Deployment",
      `metadata: { name: ${prefix}-${i} }`,
      "spec:",
      "  source: internal_container",
      "  source_config: {}",
      `  source_revision_config: { image_uri: "registry.example/bench-${i}:${tag}" }`,
    ].join("\n");
  await mkdir(root, { recursive: true });
  await writeFile(join(root, "all.yaml"), Array.from({ length: n }, (_, i) => manifest(i)).join("\n---\n"));
}

/** `plumb apply ROOT --yes --concurrency 32` against `url`, printing nothing; `fetch` may count requests. */
export function applyQuietly(url: string, root: string, fetchImpl?: typeof fetch): Promise<number> {
  const sink = { write: () => true };
  return runApply(
    root,
    { target: [], wait: true, timeout: 600_000, concurrency: 32, yes: true, output: "json" },
    {
      stdout: sink,
      stderr: sink,
      env: { PLUMB_API_URL: url, PLUMB_API_KEY: DEFAULT_API_KEY },
      ...(fetchImpl ? { fetch: fetchImpl } : {}),
      signals: { once: () => process, removeListener: () => process },
    },
  );
}
