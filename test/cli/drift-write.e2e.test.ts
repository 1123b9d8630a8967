import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runApply } from "../../src/cli/sync/apply.js";
import { runDrift } from "../../src/cli/sync/drift.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { api } from "../controller/support.js";
import { applyFlags, captureIo, startPlane } from "./reconcile-helpers.js";

// drift --write: a change made in the UI becomes a change of the YAML. On a manifest full of
// comments only the drifted lines change, and plan is then a no-op. (A secret changed live cannot be
// seen at all: the API masks values.)

let cp: RunningControlPlane;
let root: string;
afterEach(async () => {
  await cp?.stop();
  await rm(root, { recursive: true, force: true });
});

const MANIFEST = `# yaml-language-server: $schema=../schemas/plumb.schema.json
# The docs agent. Owned by #team-docs; page them before touching the image.
apiVersion: plumb/v1
kind: Deployment # the only kind here
metadata:
  name: docs # stable: status files are named after it
  labels: { team: docs }
spec:
  source: internal_container
  source_config: {}
  source_revision_config:
    # Pinned by the release job; see RELEASING.md.
    image_uri: "registry.example/docs:1.0"   # quoted on purpose
  secrets:
    - name: TOKEN # rotated monthly
      valueFrom: { env: TOKEN }
`;

describe("drift --write", () => {
  it("writes the live value into the drifted line only; plan is then a no-op", async () => {
    ({ cp, root } = await startPlane());
    await writeFile(join(root, "docs.yaml"), MANIFEST);
    const env = { TOKEN: "t0ken-value" };
    const io = () => {
      const captured = captureIo(cp);
      captured.env = { ...captured.env, ...env };
      return captured;
    };
    expect(await runApply(root, applyFlags(), io())).toBe(0);
    // Someone changes the image (and the secret) in the UI.
    const docs = await api(cp.url).deployment("docs");
    await fetch(`${cp.url}/v2/deployments/${docs.id}`, {
      method: "PATCH",
      headers: { "x-api-key": DEFAULT_API_KEY, "content-type": "application/json" },
      body: JSON.stringify({
        source_revision_config: { image_uri: "registry.example/docs:1.1-hotfix" },
        secrets: [{ name: "TOKEN", value: "changed-in-the-ui" }],
      }),
    });

    const captured = io();
    const code = await runDrift(root, { output: "text", target: [], write: true }, captured);
    expect(code).toBe(2);
    expect(captured.out()).toContain(
      'wrote docs.yaml:13 docs source_revision_config.image_uri: "registry.example/docs:1.0" → "registry.example/docs:1.1-hotfix"',
    );
    const after = await readFile(join(root, "docs.yaml"), "utf8");
    expect(after).toBe(MANIFEST.replace('"registry.example/docs:1.0"', '"registry.example/docs:1.1-hotfix"'));

    const plan = captureIo(cp);
    plan.env = { ...plan.env, ...env };
    await planCommand(plan).parseAsync(["node", "plan", root, "--output", "json"]);
    process.exitCode = 0;
    const json = JSON.parse(plan.out()) as {
      changes: Array<{ revision_fields: string[]; in_place_fields: string[] }>;
    };
    expect(json.changes.flatMap((c) => [...c.revision_fields, ...c.in_place_fields])).not.toContain(
      "source_revision_config.image_uri",
    );
  });
});
