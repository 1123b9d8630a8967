import { describe, expect, it } from "vitest";
import { createDerivations } from "../../../src/diff/secrets/scrypt-derivations.js";

// The memo of scrypt derivations: what it reuses, what it forgets, and that it stays bounded.
// Cheap parameters: the memo is what is under test, not scrypt.

const CHEAP = { N: 16, r: 1, p: 1 };

describe("createDerivations", () => {
  it("a key derived on the threadpool answers the synchronous check without deriving again", async () => {
    const derivations = createDerivations();
    const key = await derivations.derive("x", "salt", CHEAP);
    expect(derivations.deriveSync("x", "salt", CHEAP).equals(key)).toBe(true);
    expect(derivations.count).toBe(1);
  });

  it("a failed derivation is not remembered: the next one runs (and fails) again", async () => {
    const derivations = createDerivations();
    const bad = { N: 3, r: 1, p: 1 }; // not a power of two: scrypt refuses it
    await expect(derivations.derive("x", "salt", bad)).rejects.toThrow();
    await expect(derivations.derive("x", "salt", bad)).rejects.toThrow();
    expect(derivations.count).toBe(2);
  });

  it("past maxEntries the memo starts afresh (bounded), at the bound and not later", () => {
    const derivations = createDerivations(2);
    derivations.deriveSync("a", "salt", CHEAP);
    derivations.deriveSync("b", "salt", CHEAP);
    derivations.deriveSync("b", "salt", CHEAP);
    derivations.deriveSync("a", "salt", CHEAP); // both held, up to the bound
    expect(derivations.count).toBe(2);
    derivations.deriveSync("c", "salt", CHEAP); // the memo held 2: cleared, then c
    derivations.deriveSync("a", "salt", CHEAP); // forgotten: derived again
    expect(derivations.count).toBe(4);
  });

  it("a failure forgets only its own entry, not a newer derivation of the same input", async () => {
    const derivations = createDerivations(1);
    let abort: (error: Error) => void = () => undefined;
    // A limit that gives up before running its task (as a queue being shut down would).
    const aborted = <T>() => new Promise<T>((_, reject) => (abort = reject));
    const first = derivations.derive("x", "salt", CHEAP, aborted);
    derivations.deriveSync("y", "salt", CHEAP); // the memo held 1: cleared
    const second = derivations.derive("x", "salt", CHEAP); // a newer entry for x
    abort(new Error("limit shut down"));
    await expect(first).rejects.toThrow("limit shut down");
    const key = await second;
    expect((await derivations.derive("x", "salt", CHEAP)).equals(key)).toBe(true);
    expect(derivations.count).toBe(2); // y and the second x; the third call was a memo hit
  });
});
