import { rm } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { PlumbError } from "../../src/errors.js";
import type { ObjectStatus } from "../../src/status/status-types.js";
import { call, containerDoc, type Env, startEnv, writeManifests } from "../reconcile/harness.js";

// The engine when its records cannot be written: an intent that cannot be written sends nothing; a
// record that cannot be written after the send still reports what was sent, as a failure with a code.

let env: Env;
afterEach(async () => {
  await env?.cp.stop();
  if (env) await rm(env.root, { recursive: true, force: true });
});

const failing = (from: number) => {
  const written: ObjectStatus[] = [];
  return {
    written,
    record: async (status: ObjectStatus) => {
      if (written.length >= from) throw new PlumbError("status-write-failed", "/status: disk full (ENOSPC)");
      written.push(status);
    },
  };
};

describe("records that cannot be written", () => {
  it("the write-ahead record fails: nothing is sent, the result says why", async () => {
    env = await startEnv();
    await writeManifests(env.root, [containerDoc("alpha", "img/alpha:1")]);
    const { record } = failing(0);
    const report = await env.apply({ record });
    expect(report.ok).toBe(false);
    expect(report.results[0]).toMatchObject({ outcome: "failed", id: null });
    expect(report.results[0]!.message).toContain("not sent: its status record could not be written first");
    expect(report.results[0]!.message).toContain("[status-write-failed]");
    expect((await call(env.cp, "GET", "/v2/deployments")).body!.resources).toEqual([]);
  });

  it("the record after the send fails: the result keeps the id and revision and says it was sent", async () => {
    env = await startEnv();
    await writeManifests(env.root, [containerDoc("alpha", "img/alpha:1")]);
    const { record, written } = failing(1); // the intent is written, nothing after it
    const report = await env.apply({ record });
    expect(written.map((r) => r.pending !== undefined)).toEqual([true]);
    const result = report.results[0]!;
    expect(report.ok).toBe(false);
    expect(result).toMatchObject({ outcome: "failed", sync: "Unknown" });
    expect(result.id).toEqual(expect.any(String));
    expect(result.revision_id).toEqual(expect.any(String));
    expect(result.message).toContain("sent, but its status record could not be written");
    expect((await call(env.cp, "GET", "/v2/deployments")).body!.resources).toHaveLength(1);
  });
});
