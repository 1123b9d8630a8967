import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { validateCommand } from "../../../src/cli/offline/validate.js";
import { formatGithubAnnotations } from "../../../src/manifest/format/format-github.js";
import type { Problem } from "../../../src/manifest/types.js";

const problem = (over: Partial<Problem> = {}): Problem => ({
  file: "a.yaml",
  line: 3,
  column: 5,
  severity: "error",
  code: "unknown-field",
  field: "spec.x",
  message: "unknown field",
  ...over,
});

describe("GitHub Actions annotations", () => {
  it("one workflow command per problem, errors and warnings, sorted by file and line", () => {
    const out = formatGithubAnnotations(
      [problem({ file: "b.yaml" }), problem({ severity: "warning", code: "empty-file", field: "", line: 1 })],
      (file) => `deploy/${file}`,
    );
    expect(out.split("\n")).toEqual([
      "::warning file=deploy/a.yaml,line=1,col=5,title=empty-file::unknown field",
      "::error file=deploy/b.yaml,line=3,col=5,title=unknown-field (spec.x)::unknown field",
    ]);
  });

  it("escapes what would end a property or the command: %, CR, LF, and : , in properties", () => {
    const out = formatGithubAnnotations(
      [problem({ file: "a,b:c%.yaml", message: "50% off\nsecond line\r" })],
      (file) => file,
    );
    expect(out).toBe(
      "::error file=a%2Cb%3Ac%25.yaml,line=3,col=5,title=unknown-field (spec.x)::50%25 off%0Asecond line%0D",
    );
  });
});

describe("plumb validate --output github", () => {
  const saved = process.env.GITHUB_WORKSPACE;
  afterEach(() => {
    if (saved === undefined) delete process.env.GITHUB_WORKSPACE;
    else process.env.GITHUB_WORKSPACE = saved;
    process.exitCode = 0;
  });

  it("names files relative to the repository (GITHUB_WORKSPACE), not the manifest root", async () => {
    const repo = await mkdtemp(join(tmpdir(), "plumb-gh-"));
    await mkdir(join(repo, "deploy", "team"), { recursive: true });
    await writeFile(
      join(repo, "deploy", "team", "a.yaml"),
      "apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  source: internal_container\n  sourc_revision_config: {image_uri: x}\n",
    );
    process.env.GITHUB_WORKSPACE = repo;
    let out = "";
    await validateCommand({ write: (t: string) => (out += t) }).parseAsync(
      [join(repo, "deploy"), "--output", "github"],
      { from: "user" },
    );
    expect(process.exitCode).toBe(1);
    expect(out).toMatch(
      /^::error file=deploy\/team\/a\.yaml,line=6,col=3,title=unknown-field \(spec\.sourc_revision_config\)::unknown field/m,
    );
    expect(out).toContain("0 valid manifests, 1 error, 0 warnings");
  });
});
