import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

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
