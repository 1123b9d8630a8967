import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { replaceFilesText } from "../../../src/manifest/write/replace-file.js";
import { writeFileChanges } from "../../../src/promote/file-changes.js";
import type { DriftReport } from "../../../src/reconcile/drift.js";
import { writeDriftEdits } from "../../../src/reconcile/drift-write.js";
import type { PlannedChange } from "../../../src/diff/plan/plan-types.js";

// promote --write and drift --write read a manifest, edit its text and rename the new text over
// it: an edit saved in between (an editor, another run) must refuse the write, not be lost.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-replace-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const manifest = (image: string) => `apiVersion: plumb/v1
kind: Deployment
metadata: {name: a}
spec:
  source: internal_container
  source_revision_config: {image_uri: "${image}"}
`;
const USER_EDIT = `${manifest("img:git")}# saved by the user meanwhile\n`;

describe("replaceFilesText", () => {
  it("refuses every file when one changed since it was read: manifest-changed naming it, nothing written", async () => {
    await writeFile(join(dir, "a.yaml"), "a: 1\n");
    await writeFile(join(dir, "b.yaml"), "b: 2 # the user's edit\n");
    const write = replaceFilesText(
      [
        { path: join(dir, "a.yaml"), before: "a: 1\n", after: "a: 10\n" },
        { path: join(dir, "b.yaml"), before: "b: 2\n", after: "b: 20\n" },
      ],
      "promote --write",
    );
    await expect(write).rejects.toMatchObject({
      code: "manifest-changed",
      message: expect.stringMatching(
        /b\.yaml: changed since plumb read it.*nothing was written.*run the command again/,
      ),
    });
    expect(await readFile(join(dir, "a.yaml"), "utf8")).toBe("a: 1\n");
    expect(await readFile(join(dir, "b.yaml"), "utf8")).toBe("b: 2 # the user's edit\n");
    expect((await readdir(dir)).sort()).toEqual(["a.yaml", "b.yaml"]); // no staged file left
  });

  it("writes them all when none changed", async () => {
    await writeFile(join(dir, "a.yaml"), "a: 1\n");
    await replaceFilesText([{ path: join(dir, "a.yaml"), before: "a: 1\n", after: "a: 10\n" }], "x");
    expect(await readFile(join(dir, "a.yaml"), "utf8")).toBe("a: 10\n");
  });
});

describe("promote --write", () => {
  it("keeps a file saved between the promotion's read and its write", async () => {
    await writeFile(join(dir, "a.yaml"), USER_EDIT);
    const change = { file: "a.yaml", before: manifest("img:git"), after: manifest("img:v2") };
    await expect(writeFileChanges(dir, [change])).rejects.toMatchObject({ code: "manifest-changed" });
    expect(await readFile(join(dir, "a.yaml"), "utf8")).toBe(USER_EDIT);
  });
});

describe("drift --write", () => {
  const drifted: DriftReport = {
    format_version: "1",
    in_sync: false,
    drifted: true,
    summary: {
      in_sync: 0,
      pending: 0,
      differs: 1,
      refused: 0,
      missing: 0,
      vanished: 0,
      "removed-from-git": 0,
    },
    items: [
      {
        kind: "Deployment",
        name: "a",
        id: "x",
        reason: "differs",
        origin: "drift",
        fields: [],
        field_origins: {},
        file: "a.yaml",
        line: 1,
        change: {
          fields: [
            {
              field: "source_revision_config.image_uri",
              class: "revision",
              old: "img:live",
              new: "img:git",
              origin: "drift",
            },
          ],
        } as unknown as PlannedChange,
      },
    ],
    not_checked: [],
  };

  it("keeps a file saved between drift's read and its write", async () => {
    await writeFile(join(dir, "a.yaml"), manifest("img:git"));
    const write = writeDriftEdits(dir, drifted, undefined, () => writeFile(join(dir, "a.yaml"), USER_EDIT));
    await expect(write).rejects.toMatchObject({ code: "manifest-changed" });
    expect(await readFile(join(dir, "a.yaml"), "utf8")).toBe(USER_EDIT);
    // Run again: the edit is made on the file as it is now, the user's line kept.
    await writeDriftEdits(dir, drifted);
    expect(await readFile(join(dir, "a.yaml"), "utf8")).toBe(USER_EDIT.replace("img:git", "img:live"));
  });

  it("refuses a file yaml cannot read (saved after the load) at FILE:LINE:COL instead of hanging", async () => {
    const hostile = `# saved meanwhile\u2028${manifest("img:git")}`;
    await writeFile(join(dir, "a.yaml"), hostile);
    const write = writeDriftEdits(dir, drifted);
    await expect(write).rejects.toMatchObject({ code: "invalid-manifests" });
    await expect(writeDriftEdits(dir, drifted)).rejects.toThrow(
      /^a\.yaml:1:18: a lone carriage return .*\(yaml-line-break\)$/,
    );
    expect(await readFile(join(dir, "a.yaml"), "utf8")).toBe(hostile);
  });
});
