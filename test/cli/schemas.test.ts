import { mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { schemasCommand } from "../../src/cli/offline/schemas.js";

const committed = new URL("../../schemas/", import.meta.url);

describe("plumb schemas --out DIR", () => {
  it("writes the schemas the repository commits (same content), creating DIR, and says where", async () => {
    const dir = join(await mkdtemp(join(tmpdir(), "plumb-schemas-")), "nested", "schemas");
    let out = "";
    await schemasCommand({ write: (t: string) => (out += t) }).parseAsync(["--out", dir], { from: "user" });
    const names = (await readdir(dir)).sort();
    expect(names).toEqual((await readdir(committed)).filter((n) => n.endsWith(".json")).sort());
    for (const name of names) {
      const written = JSON.parse(await readFile(join(dir, name), "utf8")) as { $id?: string };
      expect(written).toEqual(JSON.parse(await readFile(new URL(name, committed), "utf8")));
      expect(written.$id).toBe(`https://plumb.dev/schemas/${name}`);
      expect(out).toContain(`wrote ${join(dir, name)}`);
    }
  });

  it("refreshes an older copy in place", async () => {
    const dir = await mkdtemp(join(tmpdir(), "plumb-schemas-"));
    await writeFile(join(dir, "plumb.schema.json"), "{}");
    await schemasCommand({ write: () => true }).parseAsync(["--out", dir], { from: "user" });
    expect(JSON.parse(await readFile(join(dir, "plumb.schema.json"), "utf8"))).toHaveProperty("$id");
  });

  it("needs --out", async () => {
    const command = schemasCommand({ write: () => true })
      .exitOverride()
      .configureOutput({ writeErr: () => {} });
    await expect(command.parseAsync([], { from: "user" })).rejects.toThrow(/--out/);
  });
});
