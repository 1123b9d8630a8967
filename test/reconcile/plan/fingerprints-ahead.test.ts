import { describe, expect, it } from "vitest";
import { checkFingerprints, fingerprintSecretsAsync } from "../../../src/diff/secrets/secret-fingerprint.js";
import { parseManifestText } from "../../../src/manifest/parse.js";
import { fingerprintsAhead } from "../../../src/reconcile/plan/fingerprints-ahead.js";
import { blankObjectStatus, type ObjectStatus } from "../../../src/status/status-types.js";

// Plan starts each deployment's whole-list fingerprint check while the manifests are still being
// parsed (issue 28 item 6); the check after resolution must then derive nothing again, and a wrong
// guess must never change an answer.

const manifest = (name: string) => `apiVersion: plumb/v1
kind: Deployment
metadata: {name: ${name}}
spec:
  source: gitrepo
  secrets:
    - name: TOKEN
      valueFrom: {env: TOKEN}
    - name: DB
      value: db-${name}
`;

/** A limit that counts the scrypt calls it runs. */
function counting() {
  let calls = 0;
  const limit = <T>(task: () => Promise<T>) => {
    calls += 1;
    return task();
  };
  return { limit, calls: () => calls };
}

async function recordFor(name: string, token: string): Promise<ObjectStatus> {
  const record = blankObjectStatus("Deployment", name);
  const fingerprints = await fingerprintSecretsAsync([
    { name: "TOKEN", value: token },
    { name: "DB", value: `db-${name}` },
  ]);
  return { ...record, secret_fingerprints: fingerprints };
}

describe("fingerprint checks started while parsing", () => {
  it("a check whose list was started ahead derives nothing again, and answers the same", async () => {
    const record = await recordFor("a", "t0");
    const early = fingerprintsAhead(() => record, { TOKEN: "t0" });
    early.onParsed(parseManifestText(manifest("a"), "a.yaml").documents);
    expect(early.ahead.size).toBe(1);
    const secrets = [
      { name: "TOKEN", value: "t0" },
      { name: "DB", value: "db-a" },
    ];
    const after = counting();
    const checked = await checkFingerprints(record.secret_fingerprints!, secrets, after.limit, early.ahead);
    expect(after.calls()).toBe(0);
    expect([...checked.checked!.values()].map((c) => c.match)).toEqual([true, true]);
  });

  it("a wrong guess (the value changed since) is a miss: the check derives and finds the change", async () => {
    const record = await recordFor("a", "t0");
    const early = fingerprintsAhead(() => record, { TOKEN: "t0" });
    early.onParsed(parseManifestText(manifest("a"), "a.yaml").documents);
    const changed = [
      { name: "TOKEN", value: "t1" },
      { name: "DB", value: "db-a" },
    ];
    const after = counting();
    const checked = await checkFingerprints(record.secret_fingerprints!, changed, after.limit, early.ahead);
    expect(after.calls()).toBeGreaterThan(0);
    expect(checked.checked!.get("TOKEN")?.match).toBe(false);
    expect(checked.checked!.get("DB")?.match).toBe(true);
  });

  it("starts nothing without a record, or when a value is not a literal or a set variable", async () => {
    const record = await recordFor("a", "t0");
    const none = fingerprintsAhead(() => undefined, { TOKEN: "t0" });
    none.onParsed(parseManifestText(manifest("a"), "a.yaml").documents);
    const unset = fingerprintsAhead(() => record, {});
    unset.onParsed(parseManifestText(manifest("a"), "a.yaml").documents);
    expect(none.ahead.size + unset.ahead.size).toBe(0);
  });
});
