import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadManifests } from "../src/manifest/load.js";

// Validation time per MB of hostile manifests (issue 10: 50,000 keys once took 44 s, quadratic),
// against a baseline measured in the same run: ordinary manifests, many documents in one file of
// about the same size. Target: each hostile file validates in under 2 s, i.e. linear in its size.

const TARGET_MS = 2000;
const HEAD =
  "apiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: big\nspec:\n  source: external_container\n";

const ordinary = (i: number) => `---
apiVersion: plumb/v1
kind: Deployment
metadata:
  name: agent-${i}
  labels: {team: team-${i % 17}}
spec:
  source: external_container
  source_config:
    listener_id: 10000000-0000-4000-8000-000000000001
    listener_config: {k8s_namespace: agents}
  source_revision_config:
    image_uri: registry.example/agent-${i}:1.0.${i}
  secrets:
    - name: OPENAI_API_KEY
      valueFrom: {env: OPENAI_API_KEY}
`;

const CASES: Array<{ name: string; text: () => string }> = [
  {
    name: "baseline: 2,000 ordinary documents in one file",
    text: () => Array.from({ length: 2000 }, (_, i) => ordinary(i)).join(""),
  },
  {
    name: "50,000 keys in a block map",
    text: () => HEAD + Array.from({ length: 50_000 }, (_, i) => `  k${i}: v\n`).join(""),
  },
  {
    name: "90,000 keys in a flow map",
    text: () => `${HEAD}  extra: {${Array.from({ length: 90_000 }, (_, i) => `k${i}: v`).join(",")}}\n`,
  },
  {
    name: "flow lists nested 200,000 deep",
    text: () => `${HEAD}  extra: ${"[".repeat(200_000)}${"]".repeat(200_000)}\n`,
  },
  { name: "block lists nested 300,000 deep", text: () => `${HEAD}  extra:\n    ${"- ".repeat(300_000)}x\n` },
];

export async function run(): Promise<string[]> {
  const root = await mkdtemp(join(tmpdir(), "plumb-bench-hostile-"));
  const lines: string[] = [];
  let baselinePerMb = 0;
  try {
    for (const [index, c] of CASES.entries()) {
      const dir = join(root, String(index));
      await mkdir(dir);
      const text = c.text();
      await writeFile(join(dir, "m.yaml"), text);
      const mb = Buffer.byteLength(text) / 1024 / 1024;
      const started = performance.now();
      const { problems } = await loadManifests(dir);
      const ms = performance.now() - started;
      const perMb = ms / mb;
      if (index === 0) baselinePerMb = perMb;
      const ratio = index === 0 ? "" : `, ${(perMb / baselinePerMb).toFixed(1)}x the baseline per MB`;
      const verdict = ms < TARGET_MS ? "ok" : "OVER TARGET";
      const codes = [...new Set(problems.map((p) => p.code))].slice(0, 3).join(", ") || "no problems";
      lines.push(
        `${c.name}: ${mb.toFixed(2)} MB in ${ms.toFixed(0)} ms = ${perMb.toFixed(0)} ms/MB${ratio} (target < ${TARGET_MS} ms) ${verdict}; ${codes}`,
      );
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  return lines;
}
