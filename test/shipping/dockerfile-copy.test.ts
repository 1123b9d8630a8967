import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// The image's build stage sees only what its COPY lines name (minus .dockerignore). A file the
// build reads but no COPY brings in breaks the image and nothing else: tsconfig.page.json did that
// (TS5058). This replays the build stage's inputs: the files npm ci and `npm run build` read (each
// tsc -p config, what it extends, every file it compiles) must all be copied. The real build runs
// in scripts/image-test.sh (.ci/run).

type Stage = { name: string; copies: Array<{ from: string | undefined; sources: string[]; dest: string }> };

function parseStages(dockerfile: string): Stage[] {
  const stages: Stage[] = [];
  const lines = dockerfile.replace(/\\\n/g, " ").split("\n");
  for (const line of lines) {
    const from = /^FROM\s+\S+(?:\s+AS\s+(\S+))?/i.exec(line);
    if (from) stages.push({ name: from[1] ?? String(stages.length), copies: [] });
    const copy = /^COPY\s+(.*)$/i.exec(line);
    if (!copy || stages.length === 0) continue;
    const words = copy[1]!.trim().split(/\s+/);
    const fromFlag = words.find((w) => w.startsWith("--from="))?.slice("--from=".length);
    const args = words.filter((w) => !w.startsWith("--"));
    stages.at(-1)!.copies.push({ from: fromFlag, sources: args.slice(0, -1), dest: args.at(-1)! });
  }
  return stages;
}

/** .dockerignore lines as matchers of a repository-relative path (its first segments or a glob). */
function ignoredBy(dockerignore: string): (path: string) => boolean {
  const patterns = dockerignore
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
  const regexes = patterns.map(
    (p) => new RegExp(`^${p.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*")}(/|$)`),
  );
  return (path) => regexes.some((r) => r.test(path));
}

/** Every file `tsc -p config` reads from the repository: the config, what it extends, its inputs. */
function tscInputs(config: string): string[] {
  const root = process.cwd();
  const files = new Set<string>();
  let current: string | undefined = join(root, config);
  while (current) {
    files.add(relative(root, current));
    const extended: string | undefined = (
      ts.readConfigFile(current, ts.sys.readFile).config as { extends?: string }
    ).extends;
    current = extended ? join(dirname(current), extended) : undefined;
  }
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(root, config),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
      },
    },
  );
  for (const file of parsed?.fileNames ?? []) files.add(relative(root, file));
  return [...files];
}

/** Files the build stage must hold: npm ci's inputs and those of every `tsc -p` in `npm run build`. */
function buildInputs(): string[] {
  const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { scripts: Record<string, string> };
  const configs = [...pkg.scripts.build!.matchAll(/\btsc\s+-p\s+(\S+)/g)].map((m) => m[1]!);
  expect(configs.length).toBeGreaterThan(0);
  const npm = ["package.json", "package-lock.json", ".npmrc"].filter((f) => existsSync(f));
  return [...new Set([...npm, ...configs.flatMap(tscInputs)])];
}

/** The inputs no COPY of the build stage brings in (or that .dockerignore drops). */
function missingFromBuildStage(dockerfile: string, dockerignore: string, inputs: string[]): string[] {
  const build = parseStages(dockerfile).find((s) => s.name === "build");
  if (!build) throw new Error("the Dockerfile has no stage named build");
  const sources = build.copies
    .filter((c) => !c.from)
    .flatMap((c) => c.sources.map((s) => s.replace(/^\.\//, "")));
  const ignored = ignoredBy(dockerignore);
  return inputs.filter(
    (file) => ignored(file) || !sources.some((s) => s === "." || file === s || file.startsWith(`${s}/`)),
  );
}

const dockerfile = readFileSync("Dockerfile", "utf8");
const dockerignore = readFileSync(".dockerignore", "utf8");

describe("the Dockerfile's build stage", () => {
  it("copies every file npm ci and npm run build read", () => {
    const inputs = buildInputs();
    expect(inputs).toContain("tsconfig.page.json");
    expect(inputs).toContain("src/cli/main.ts");
    expect(missingFromBuildStage(dockerfile, dockerignore, inputs)).toEqual([]);
  });

  it("catches a missing file: the COPY list before tsconfig.page.json was added", () => {
    const old = dockerfile.replace(" tsconfig.page.json", "");
    expect(old).not.toBe(dockerfile);
    expect(missingFromBuildStage(old, dockerignore, buildInputs())).toEqual(["tsconfig.page.json"]);
    // A directory dropped by .dockerignore is missing too.
    expect(missingFromBuildStage(dockerfile, `${dockerignore}\nsrc/status-page\n`, buildInputs())).toContain(
      "src/status-page/browser/status-page.js",
    );
  });

  it("the runtime stage takes from the build stage only what it has, and copies files that exist", () => {
    const [build, runtime] = parseStages(dockerfile);
    const built = new Set(["package.json", "node_modules", "dist"]); // npm ci / npm run build make these
    const copied = build!.copies.flatMap((c) => c.sources.map((s) => s.replace(/^\.\//, "")));
    for (const copy of runtime!.copies) {
      for (const source of copy.sources) {
        if (copy.from === "build") {
          const path = source.replace(/^\/app\//, "");
          const ok = built.has(path) || copied.some((s) => path === s || path.startsWith(`${s}/`));
          expect(ok, `COPY --from=build ${source}: the build stage does not have it`).toBe(true);
          if (!built.has(path)) expect(existsSync(path), path).toBe(true);
        } else {
          expect(existsSync(source), `COPY ${source}`).toBe(true);
          expect(ignoredBy(dockerignore)(source), `COPY ${source} is in .dockerignore`).toBe(false);
        }
      }
    }
  });
});
