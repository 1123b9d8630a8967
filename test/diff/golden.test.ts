import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildPlan, type LiveState } from "../../src/diff/plan/build-plan.js";
import type { RecordedSource } from "../../src/diff/diff-source.js";
import { formatPlanJson } from "../../src/report/format-json.js";
import { formatPlanMarkdown } from "../../src/report/markdown/format-markdown.js";
import { formatPlanText } from "../../src/report/format-text.js";
import { fingerprintSecrets } from "../../src/diff/secrets/secret-fingerprint.js";
import { loadManifests } from "../../src/manifest/load.js";
import { resolveDesiredObject } from "../../src/reconcile/plan/resolve-desired.js";

// Golden cases: test/fixtures/plan/<case>/ holds desired.yaml, live.json ({deployments,
// organization?}) and optionally recorded.json ({"Deployment/NAME": [{name, value}]}: the secret
// values last applied), sources.json ({"Deployment/NAME": {digest, object_path}}: the source last
// uploaded) and env.json. Directories named by source_path sit in the case directory. The plan in text, JSON and Markdown must match expected.txt,
// expected.json.golden and expected.md.golden (a suffix prettier leaves alone)
// exactly. UPDATE_GOLDEN=1 rewrites them (review the diff before committing).

const ROOT = join(import.meta.dirname, "../fixtures/plan");
const update = process.env.UPDATE_GOLDEN === "1";
const readJson = <T>(path: string, fallback: T): T =>
  existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as T) : fallback;

async function planCase(dir: string) {
  const { manifests, problems } = await loadManifests(join(dir, "desired.yaml"));
  expect(problems.filter((p) => p.severity === "error")).toEqual([]);
  const env = readJson<Record<string, string>>(join(dir, "env.json"), {});
  const desired = await Promise.all(
    manifests.map((loaded) => resolveDesiredObject(loaded, { root: dir, env })),
  );
  const live = readJson<LiveState>(join(dir, "live.json"), { deployments: [] });
  const recorded = readJson<Record<string, { name: string; value: string }[]>>(
    join(dir, "recorded.json"),
    {},
  );
  const fingerprints = Object.fromEntries(
    Object.entries(recorded).map(([key, secrets]) => [key, fingerprintSecrets(secrets, "golden-salt")]),
  );
  const sources = readJson<Record<string, RecordedSource>>(join(dir, "sources.json"), {});
  return buildPlan({
    desired,
    live,
    fingerprints: (kind, name) => fingerprints[`${kind}/${name}`],
    sources: (kind, name) => sources[`${kind}/${name}`],
  });
}

function check(dir: string, file: string, actual: string) {
  const path = join(dir, file);
  if (update || !existsSync(path)) writeFileSync(path, actual);
  expect(actual).toBe(readFileSync(path, "utf8"));
}

describe("golden plans", () => {
  const cases = readdirSync(ROOT, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
  it("has cases", () => expect(cases.length).toBeGreaterThan(5));
  for (const name of cases.sort()) {
    it(name, async () => {
      const dir = join(ROOT, name);
      const plan = await planCase(dir);
      check(dir, "expected.txt", formatPlanText(plan));
      check(dir, "expected.json.golden", formatPlanJson(plan));
      check(dir, "expected.md.golden", formatPlanMarkdown(plan));
      const secrets = Object.values(
        readJson<Record<string, { value: string }[]>>(join(dir, "recorded.json"), {}),
      );
      for (const out of ["expected.txt", "expected.json.golden", "expected.md.golden"].map((f) =>
        readFileSync(join(dir, f), "utf8"),
      )) {
        expect(out).not.toContain("SECRET-VALUE");
        for (const s of secrets.flat()) expect(out).not.toContain(s.value);
      }
    });
  }
});
