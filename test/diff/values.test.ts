import { describe, expect, it } from "vitest";
import { deepEqual, isAbsent, isObject, sortByName, withoutAbsent } from "../../src/diff/values.js";

describe("diff values", () => {
  it("absent is null or undefined, nothing else", () => {
    expect([null, undefined].every(isAbsent)).toBe(true);
    expect([0, "", false, [], {}].some(isAbsent)).toBe(false);
  });

  it("an object is a plain JSON object: not null, not an array", () => {
    expect(isObject({})).toBe(true);
    expect([null, [], "x", 1].some(isObject)).toBe(false);
  });

  it("deepEqual: absent equals absent only, arrays by order and length, objects by keys whatever their order", () => {
    expect(deepEqual(null, undefined)).toBe(true);
    expect(deepEqual(null, 0)).toBe(false);
    expect(deepEqual(0, undefined)).toBe(false);
    expect(deepEqual([1, 2], [1, 2])).toBe(true);
    expect(deepEqual([1, 2], [2, 1])).toBe(false);
    expect(deepEqual([1], [1, 2])).toBe(false);
    expect(deepEqual([1], { 0: 1 })).toBe(false);
    expect(deepEqual({ 0: 1 }, [1])).toBe(false);
    expect(deepEqual({ a: 1, b: { c: [1] } }, { b: { c: [1] }, a: 1 })).toBe(true);
    expect(deepEqual({ a: 1, b: null }, { a: 1 })).toBe(true);
    expect(deepEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(deepEqual({ a: 1, b: 2 }, { a: 1 })).toBe(false);
    expect(deepEqual({ a: 1 }, "a")).toBe(false);
    expect(deepEqual("a", { a: 1 })).toBe(false);
    expect(deepEqual("a", "a")).toBe(true);
    expect(deepEqual(1, 2)).toBe(false);
  });

  it("deepEqual: an object with a length key is no array, a string no object", () => {
    expect(deepEqual({ length: 1, 0: 1 }, [1])).toBe(false);
    expect(deepEqual([1], { length: 1, 0: 1 })).toBe(false);
    expect(deepEqual({}, "")).toBe(false);
    expect(deepEqual("", {})).toBe(false);
  });

  it("withoutAbsent drops null and undefined properties, one level, and takes an absent object", () => {
    expect(withoutAbsent({ a: null, b: undefined, c: 0, d: { e: null } })).toEqual({ c: 0, d: { e: null } });
    expect(withoutAbsent(null)).toEqual({});
    expect(withoutAbsent(undefined)).toEqual({});
  });

  it("sortByName sorts a copy by name", () => {
    const items = [{ name: "b" }, { name: "a" }, { name: "c" }, { name: "a" }];
    expect(sortByName(items).map((i) => i.name)).toEqual(["a", "a", "b", "c"]);
    expect(items.map((i) => i.name)).toEqual(["b", "a", "c", "a"]);
  });

  it("sortByName is stable: equal names keep their order, whichever comes first", () => {
    const items = [
      { name: "b", at: 1 },
      { name: "a", at: 2 },
      { name: "b", at: 3 },
      { name: "a", at: 4 },
    ];
    expect(sortByName(items).map((i) => i.at)).toEqual([2, 4, 1, 3]);
    expect(sortByName([...items].reverse()).map((i) => i.at)).toEqual([4, 2, 3, 1]);
  });
});
