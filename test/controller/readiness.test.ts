import { describe, expect, it } from "vitest";
import { createReadiness } from "../../src/controller/readiness.js";

describe("readiness", () => {
  it("is ready once the first scan is done; settled once each of its objects was reconciled once", () => {
    const r = createReadiness();
    r.expect("a");
    r.expect("b");
    expect(r.settle("a")).toBe(false); // the scan is not complete yet
    expect(r.ready()).toBe(false);
    expect(r.scanned()).toBe(false);
    expect(r.ready()).toBe(true); // manifests loaded: /readyz 200, reconciles or not
    expect(r.settled()).toBe(false);
    expect(r.settle("b")).toBe(true); // this one settled it: said once
    expect(r.settled()).toBe(true);
    expect(r.settle("b")).toBe(false);
    expect(r.settle("later")).toBe(false);
  });

  it("is ready and settled at once when the first scan found nothing", () => {
    const r = createReadiness();
    expect(r.ready()).toBe(false);
    expect(r.scanned()).toBe(true);
    expect(r.ready() && r.settled()).toBe(true);
  });
});
