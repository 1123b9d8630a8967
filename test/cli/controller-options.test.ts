import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { controllerCommand } from "../../src/cli/controller/controller.js";
import { addConnectionOptions } from "../../src/cli/options.js";

// The connection flags come from the one shared declaration (src/cli/options.ts): same names, help
// and order as plan/apply/drift/status, and a flag added there reaches the controller too.

const connection = () => addConnectionOptions(new Command("x"), "branch help").options;

describe("plumb controller connection flags", () => {
  it("are the shared connection options, in their order and with their help", () => {
    const controller = controllerCommand().options;
    const shared = connection();
    const at = controller.findIndex((o) => o.long === shared[0]!.long);
    const got = controller.slice(at, at + shared.length);
    expect(got.map((o) => o.flags)).toEqual(shared.map((o) => o.flags));
    for (const [i, option] of got.entries())
      if (!["--status-dir", "--status-branch"].includes(option.long!))
        expect(option.description).toBe(shared[i]!.description);
  });

  it("say where the controller keeps status (no PATH argument here)", () => {
    const options = controllerCommand().options;
    const help = (long: string) => options.filter((o) => o.long === long).map((o) => o.description);
    expect(help("--status-dir")).toEqual([
      "status store (default <manifest directory (--path)>/.plumb/status, as plan and apply)",
    ]);
    expect(help("--status-branch")).toEqual([
      "also commit the status to this branch of the manifest repository",
    ]);
    for (const flag of ["--api-url", "--api-key-file", "--tenant-id", "--platform-url"])
      expect(help(flag)).toHaveLength(1); // declared once
  });
});
