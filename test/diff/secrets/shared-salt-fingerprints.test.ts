import { describe, expect, it } from "vitest";
import { createDerivations } from "../../../src/diff/secrets/scrypt-derivations.js";
import { diffSecrets } from "../../../src/diff/secrets/diff-secrets.js";
import {
  checkFingerprints,
  fingerprintSecretsAsync,
  matchesFingerprint,
  type SecretFingerprints,
  type SecretOrigin,
} from "../../../src/diff/secrets/secret-fingerprint.js";

// Issue 28 item 6: the records apply writes now (a value from the environment or a file under its
// source's shared salt, a literal as an HMAC) cost a plan one scrypt per distinct value, not one per
// deployment. Counted with the derivations' own counter; records of every earlier form still verify.

const ORIGINS = new Map<string, SecretOrigin>([
  ["TOKEN", { source: "env\0BENCH_TOKEN" }],
  ["DB_PASSWORD", { literal: true }],
]);
const secretsOf = (i: number, token = "token-shared-by-all") => [
  { name: "TOKEN", value: token },
  { name: "DB_PASSWORD", value: `db-${i}` },
];
const matches = (checked: Awaited<ReturnType<typeof checkFingerprints>>) =>
  Object.fromEntries([...(checked.checked ?? [])].map(([name, c]) => [name, c.match]));

async function records(count: number, origins?: ReadonlyMap<string, SecretOrigin>) {
  const writer = createDerivations();
  const written = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      fingerprintSecretsAsync(secretsOf(i), undefined, origins, writer),
    ),
  );
  return { written, writer };
}

describe("fingerprints under a source's shared salt", () => {
  it("1,000 deployments sharing a value from the environment, each with a literal: one scrypt to write, one to check", async () => {
    const { written, writer } = await records(1000, ORIGINS);
    expect(writer.count).toBe(1);
    const checker = createDerivations();
    const checked = await Promise.all(
      written.map((fp, i) => checkFingerprints(fp, secretsOf(i), undefined, checker)),
    );
    expect(checker.count).toBe(1);
    expect(checked.every((c) => matches(c).TOKEN === true && matches(c).DB_PASSWORD === true)).toBe(true);
  });

  it("records written before (per-object salt and set) still verify, at one scrypt per deployment", async () => {
    const { written } = await records(20);
    expect(written[0]!.set).toMatch(/^scrypt\$1024\$8\$1\$[\w-]+$/);
    const checker = createDerivations();
    const checked = await Promise.all(
      written.map((fp, i) => checkFingerprints(fp, secretsOf(i), undefined, checker)),
    );
    expect(checker.count).toBe(20);
    expect(checked.every((c) => matches(c).TOKEN === true && matches(c).DB_PASSWORD === true)).toBe(true);
  });

  it("a changed value is still reported as changed, by name, and costs one more scrypt for all deployments", async () => {
    const { written } = await records(50, ORIGINS);
    const checker = createDerivations();
    const rotated = await Promise.all(
      written.map((fp, i) => checkFingerprints(fp, secretsOf(i, "rotated"), undefined, checker)),
    );
    expect(checker.count).toBe(1);
    expect(rotated.every((c) => matches(c).TOKEN === false && matches(c).DB_PASSWORD === true)).toBe(true);
    const diff = diffSecrets(
      secretsOf(7, "rotated"),
      secretsOf(7).map(({ name }) => ({ name, value: "********" })),
      rotated[7],
    );
    expect(diff.changedNames).toEqual(["TOKEN"]);
    // A changed literal, checked without the async step (the synchronous fallback reads every form).
    const literal = [secretsOf(3)[0]!, { name: "DB_PASSWORD", value: "db-changed" }];
    expect(matchesFingerprint(written[3]!, "DB_PASSWORD", "db-changed")).toBe(false);
    expect(matchesFingerprint(written[3]!, "TOKEN", "token-shared-by-all")).toBe(true);
    expect(matches(await checkFingerprints(written[3]!, literal, undefined, checker))).toEqual({
      TOKEN: true,
      DB_PASSWORD: false,
    });
  });

  it("say their form: an HMAC for a literal, scrypt with the source's salt otherwise; no value, no set", async () => {
    const { written } = await records(2, ORIGINS);
    const [a, b] = written as [SecretFingerprints, SecretFingerprints];
    expect(a.values.DB_PASSWORD).toMatch(/^hmac-sha256\$[\w-]{43}$/);
    expect(a.values.TOKEN).toMatch(/^scrypt\$1024\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(a.set).toBeUndefined();
    // One salt per source (and writer process): the same value from it, the same fingerprint.
    expect(b.values.TOKEN).toBe(a.values.TOKEN);
    expect(a.salt).not.toBe(b.salt);
    const other = await fingerprintSecretsAsync(
      [{ name: "TOKEN", value: "token-shared-by-all" }],
      undefined,
      new Map([["TOKEN", { source: "env\0OTHER_TOKEN" }]]),
    );
    expect(other.values.TOKEN).not.toBe(a.values.TOKEN);
    expect(JSON.stringify(written)).not.toContain("token-shared-by-all");
    expect(JSON.stringify(written)).not.toContain("db-0");
  });

  it("bind the name in both forms: a value moved to another name does not match", async () => {
    const { written } = await records(1, ORIGINS);
    const fp = written[0]!;
    const swapped = { ...fp, values: { TOKEN: fp.values.DB_PASSWORD!, DB_PASSWORD: fp.values.TOKEN! } };
    expect(matchesFingerprint(swapped, "TOKEN", "db-0")).toBe(false);
    expect(matchesFingerprint(swapped, "DB_PASSWORD", "token-shared-by-all")).toBe(false);
  });

  it("refuse malformed new forms as unknown", () => {
    const salt = "s";
    for (const bad of [
      "hmac-sha256$short",
      "scrypt$1024$8$1$a$b$c",
      "scrypt$1000$8$1$salt$" + "A".repeat(43),
    ])
      expect(matchesFingerprint({ salt, values: { TOKEN: bad } }, "TOKEN", "x")).toBeUndefined();
  });
});
