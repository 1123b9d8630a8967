import { describe, expect, it } from "vitest";
import { fillResourceDefaults, isDerivedDefault, roundResourceSpec } from "../../src/diff/resource-spec.js";

// resource_spec as the server stores it (decisions.md): CPU rounded half up to one decimal, then
// the documented defaults derived from the rounded values.

describe("resource spec", () => {
  it("rounds CPU fields only and drops null ones", () => {
    expect(roundResourceSpec({ cpu: 0.35, memory_mb: 513, queue_cpu: null, db_cpu: 1.04 })).toEqual({
      cpu: 0.4,
      memory_mb: 513,
      db_cpu: 1,
    });
    expect(roundResourceSpec(null)).toEqual({});
    expect(roundResourceSpec({ cpu: "1" })).toEqual({ cpu: "1" });
  });

  it("fills every derivable default from its rounded source, in dependency order", () => {
    expect(
      fillResourceDefaults({
        cpu: 0.35,
        memory_mb: 512,
        min_scale: 1,
        max_scale: 3,
        redis_cpu: 0.5,
        redis_memory_mb: 256,
        db_cpu: 1,
        db_memory_mb: 1024,
      }),
    ).toEqual({
      cpu: 0.4,
      cpu_limit: 0.8,
      memory_mb: 512,
      memory_limit_mb: 1024,
      min_scale: 1,
      queue_min_scale: 1,
      max_scale: 3,
      queue_max_scale: 3,
      queue_cpu: 0.4,
      queue_memory_mb: 512,
      queue_cpu_limit: 0.8,
      queue_memory_limit_mb: 1024,
      redis_cpu: 0.5,
      redis_cpu_limit: 1,
      redis_memory_mb: 256,
      redis_memory_limit_mb: 256,
      db_cpu: 1,
      db_cpu_limit: 2,
      db_memory_mb: 1024,
      db_memory_limit_mb: 2048,
    });
  });

  it("keeps a value given for a derivable field, and derives nothing from a missing source", () => {
    expect(fillResourceDefaults({ cpu: 1, cpu_limit: 3, queue_cpu: 2 })).toEqual({
      cpu: 1,
      cpu_limit: 3,
      queue_cpu: 2,
      queue_cpu_limit: 4,
    });
    expect(fillResourceDefaults({})).toEqual({});
  });

  it("knows a stored value that is exactly the server's default", () => {
    expect(isDerivedDefault({ cpu: 1, cpu_limit: 2 }, "cpu_limit")).toBe(true);
    expect(isDerivedDefault({ cpu: 1, cpu_limit: 3 }, "cpu_limit")).toBe(false);
    expect(isDerivedDefault({ cpu_limit: 2 }, "cpu_limit")).toBe(false);
    expect(isDerivedDefault({ cpu: 1 }, "cpu")).toBe(false);
  });
});
