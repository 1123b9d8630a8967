import { readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt } from "../support/built-cli.js";
import { type DocSession, startDocSession } from "./doc-session.js";
import { buildBlockScript, extractRunnableBlocks } from "./runnable-blocks.js";

// Every documentation block marked `<!-- runnable -->` runs as written (Rust's doctests for a
// shell): the blocks of one document in order, in one reader's session (the files earlier blocks
// wrote are there for later ones), against the local control plane. The documents run side by side
// (each its own session: control plane on port 0, temporary repository); their blocks in order.

const root = new URL("../../", import.meta.url);
const documents = [
  "README.md",
  "examples/README.md",
  ...readdirSync(new URL("docs/", root)).map((name) => `docs/${name}`),
]
  .filter((name) => name.endsWith(".md"))
  .map((name) => ({ name, blocks: extractRunnableBlocks(name, readFileSync(new URL(name, root), "utf8")) }))
  .filter((document) => document.blocks.length > 0);

beforeAll(assertBuilt);

it("README.md has runnable blocks", () => {
  expect(documents.find((d) => d.name === "README.md")?.blocks.length).toBeGreaterThanOrEqual(8);
});

describe.concurrent.each(documents)("$name", ({ blocks }) => {
  let session: DocSession;
  beforeAll(async () => {
    session = await startDocSession();
  }, 60_000);
  afterAll(async () => session?.close());

  it.sequential.each(blocks.map((block) => [block.at, block] as const))(
    "%s runs as written",
    async (_at, block) => {
      const result = await session.bash(buildBlockScript(block, session.rewrite));
      expect(result.code, `${block.at}:\n${result.output}`).toBe(0);
    },
    180_000,
  );
});
