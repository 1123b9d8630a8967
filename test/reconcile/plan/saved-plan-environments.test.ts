import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readSavedPlanFor } from "../../../src/reconcile/plan/saved-plan-environments.js";

// A saved plan of environments is checked before any part is used: a hand-edited outer shape is
// plan-invalid, a part missing or made against another control plane plan-environment-mismatch.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-saved-envs-"));
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

const part = (environment: string, api_url: string) => ({
  environment,
  target: { api_url, tenant_id: null },
  format_version: "1",
  changes: [],
  saved: {
    version: 1,
    created_at: "2026-11-25T00:00:00.000Z",
    targets: [],
    prune: false,
    replace: [],
    objects: [],
    organization: null,
  },
});
const target = (api_url: string) => () => ({ api_url, tenant_id: null });

async function file(value: unknown): Promise<string> {
  const path = join(dir, "plan.json");
  await writeFile(path, JSON.stringify(value));
  return path;
}

describe("readSavedPlanFor", () => {
  it("returns the environment's part, without its environment and target", async () => {
    const path = await file({ format_version: "1", environments: [part("prod", "http://127.0.0.1:1")] });
    const saved = await readSavedPlanFor(path, "prod", target("http://127.0.0.1:1"));
    expect(saved.saved.version).toBe(1);
    expect(saved).not.toHaveProperty("target");
  });

  it("refuses an edited outer shape, a missing part and another control plane", async () => {
    const edited = await file({ format_version: "1", environments: [{ environment: "prod" }] });
    await expect(readSavedPlanFor(edited, "prod", target("x"))).rejects.toMatchObject({
      code: "plan-invalid",
    });
    const plans = await file({ format_version: "1", environments: [part("prod", "http://127.0.0.1:1")] });
    await expect(readSavedPlanFor(plans, "staging", target("x"))).rejects.toMatchObject({
      code: "plan-environment-mismatch",
    });
    await expect(readSavedPlanFor(plans, "prod", target("http://127.0.0.1:2"))).rejects.toMatchObject({
      code: "plan-environment-mismatch",
    });
    await expect(readSavedPlanFor(plans, undefined, target("x"))).rejects.toMatchObject({
      code: "plan-environment-mismatch",
    });
  });
});
