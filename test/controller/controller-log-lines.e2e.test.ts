import { expect, it } from "vitest";
import { startController } from "../../src/controller/controller.js";
import { fastControllerOptions, useControllerHarness } from "./harness.js";
import { container, memoryLogger, waitFor, writeDoc } from "./support.js";

// pino writes a child's bindings and a line's fields side by side: a key bound in both appears twice
// in the JSON text (parsers keep the last one, log pipelines may keep either).

const h = useControllerHarness("plumb-ctl-log-");

/** How often `"key":` occurs in one raw JSON line. */
const occurrences = (line: string, key: string) => line.split(`"${key}":`).length - 1;

it("binds kind, object, id, revision and commit once per log line of a reconcile, apart from pino's name", async () => {
  await writeDoc(h.dir, "a.yaml", container("alpha", "img/alpha:1"));
  const log = memoryLogger();
  h.controller = await startController(
    fastControllerOptions(h.cp, {
      source: { kind: "dir", dir: h.dir },
      logger: log.logger,
    }),
  );
  await waitFor("ready", () => h.controller!.ready());
  const lines = log
    .text()
    .split("\n")
    .filter((line) => line.includes('"object":"alpha"'));
  const reconciled = lines.filter((line) => line.includes('"msg":"reconciled"'));
  expect(reconciled).toHaveLength(1);
  for (const line of lines)
    for (const key of ["kind", "object", "id", "revision", "commit", "name"])
      expect({ key, count: occurrences(line, key) }).toEqual({ key, count: 1 });
  // `name` is the program's (pino's), never overwritten by the object's.
  for (const line of lines)
    expect(JSON.parse(line)).toMatchObject({ name: "plumb-controller", object: "alpha" });
  // The create learned the id and revision: the last line carries them, not the nulls bound before.
  expect(JSON.parse(reconciled[0]!)).toMatchObject({ id: expect.any(String), revision: expect.any(String) });
});
