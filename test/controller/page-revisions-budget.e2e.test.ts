import { describe, expect, it } from "vitest";
import { startController } from "../../src/controller/controller.js";
import { fastControllerOptions, useControllerHarness } from "./harness.js";
import { container, waitFor, writeDoc } from "./support.js";

// The status page's detail view reads a deployment's revisions on the controller's own key: many
// viewers at once must not spend the budget the reconciles need. Viewers of one deployment share
// one read (fresh for 2 s); reads in all are bounded (5 a second). Counted on the controller's
// own API metric.

const h = useControllerHarness("plumb-page-revisions-");

const revisionListings = async (url: string): Promise<number> => {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line =
    /plumb_api_requests_total\{method="GET",route="\/v2\/deployments\/\{id\}\/revisions",code="200"\} (\d+)/.exec(
      text,
    );
  return Number(line?.[1] ?? 0);
};

describe("the detail view's revisions", () => {
  it("150 viewers of one deployment cost one listing; 40 deployments viewed at once at most 5", async () => {
    for (let i = 0; i < 40; i++) await writeDoc(h.dir, `d${i}.yaml`, container(`d${i}`, `img/d${i}:1`));
    h.controller = await startController(
      fastControllerOptions(h.cp, {
        source: { kind: "dir", dir: h.dir },
        listen: { host: "127.0.0.1", port: 0 },
        concurrency: 8,
      }),
    );
    const controller = h.controller;
    await waitFor("settled", () => (controller.status() as { settled: boolean }).settled, 30_000);
    const url = controller.url!;
    const before = await revisionListings(url);
    const detail = async (name: string) =>
      (await (await fetch(`${url}/ui/api/objects/Deployment/${name}`)).json()) as {
        revisions: unknown[] | null;
        revisions_error: string | null;
      };

    // Bounds in the time taken, so a loaded machine (a burst spread over seconds) does not fail it.
    let start = Date.now();
    // 150 at once, one connection each: one client address holds at most 192 (connection-cap.test.ts).
    const same = await Promise.all(Array.from({ length: 150 }, () => detail("d0")));
    expect(same.every((d) => d.revisions?.length === 1 && d.revisions_error === null)).toBe(true);
    const sameReads = (await revisionListings(url)) - before;
    expect(sameReads).toBeLessThanOrEqual(1 + Math.floor((Date.now() - start) / 2_000));

    start = Date.now();
    const many = await Promise.all(Array.from({ length: 40 }, (_, i) => detail(`d${i}`)));
    const seconds = Math.floor((Date.now() - start) / 1_000) + 1;
    const read = many.filter((d) => d.revisions !== null).length;
    expect(read).toBeGreaterThanOrEqual(5);
    expect(many.filter((d) => d.revisions_error?.includes("at most 5"))).toHaveLength(40 - read);
    expect((await revisionListings(url)) - before - sameReads).toBeLessThanOrEqual(5 * seconds);
  });
});
