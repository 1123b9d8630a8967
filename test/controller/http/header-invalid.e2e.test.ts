import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { startController } from "../../../src/controller/controller.js";
import { HEADER_PROBLEMS } from "../../../src/status-page/page-header.js";
import { fastControllerOptions, useControllerHarness } from "../harness.js";
import { container, waitFor, writeDoc } from "../support.js";

// The status page re-reads its header at each live update, and the header listed every problem of
// every invalid manifest: 300 broken files (a rule a new release adds, a bad merge) made each read
// 57 KB and each render 300 lines. It lists the first HEADER_PROBLEMS and says
// how many more there are; GET /status still lists them all.

const h = useControllerHarness("plumb-header-invalid-");

it("the page's header lists the first problems of invalid manifests and counts the rest", async () => {
  await writeDoc(h.dir, "alpha.yaml", container("alpha", "img/alpha:1"));
  for (let i = 0; i < 300; i++)
    await writeFile(
      join(h.dir, `broken-${i}.yaml`),
      `apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: b${i}}\nspec: {source: nope}\n`,
    );
  h.controller = await startController(
    fastControllerOptions(h.cp, {
      source: { kind: "dir", dir: h.dir },
      listen: { host: "127.0.0.1", port: 0 },
    }),
  );
  const url = h.controller.url;
  type Invalid = Array<{ file: string; problems: unknown[] }>;
  const status = async () => (await (await fetch(`${url}/status`)).json()) as { invalid: Invalid };
  await waitFor("the scan", async () => (await status()).invalid.length === 300);
  const all = (await status()).invalid.reduce((n, f) => n + f.problems.length, 0);
  const response = await fetch(`${url}/ui/api/header`);
  const text = await response.text();
  const header = JSON.parse(text) as { invalid: Invalid; invalid_more?: number };
  const listed = header.invalid.reduce((n, f) => n + f.problems.length, 0);
  expect(listed).toBe(HEADER_PROBLEMS);
  expect(header.invalid_more).toBe(all - HEADER_PROBLEMS);
  expect(text.length).toBeLessThan(20_000);
});
