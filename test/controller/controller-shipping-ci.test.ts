import { execFile } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parse } from "yaml";

// The plan jobs of the CI examples, run for real with bash and a stand-in `plumb` on PATH: a refused
// plan (exit 1) still reaches the pull/merge request, and the job still fails with plumb's code.

type Step = {
  name?: string;
  id?: string;
  if?: string;
  run?: string;
  uses?: string;
  with?: Record<string, string>;
  env?: Record<string, string>;
};

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-ci-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A `plumb` that prints a plan on stdout and a reason on stderr, then exits with `code`. */
async function fakePlumb(code: number): Promise<string> {
  const bin = join(dir, "bin");
  await mkdir(bin);
  const script = `#!/bin/sh\necho "## plumb plan"\necho "- update alpha"\n${code ? 'echo "refused: source is immutable" >&2\n' : ""}exit ${code}\n`;
  await writeFile(join(bin, "plumb"), script);
  await chmod(join(bin, "plumb"), 0o755);
  return bin;
}

/**
 * A `plumb` that prints `stdout` and then `stderr` as given (files beside it), then exits 1: a plan
 * as long as plumb's Markdown gets (65,000 characters) and a log of any length.
 */
async function fakePlumbPrinting(stdout: string, stderr: string): Promise<string> {
  const bin = join(dir, "bin");
  await mkdir(bin);
  await writeFile(join(bin, "out.fixture"), stdout);
  await writeFile(join(bin, "err.fixture"), stderr);
  const script = `#!/bin/sh\ncat "${bin}/out.fixture"\ncat "${bin}/err.fixture" >&2\nexit 1\n`;
  await writeFile(join(bin, "plumb"), script);
  await chmod(join(bin, "plumb"), 0o755);
  return bin;
}

/** 1 MB of log whose lines try to end a code fence and notify a team; its last line says why. */
const HUGE_LOG = `${"```\n@acme/admins <!-- ".repeat(50_000)}\n${"y".repeat(5_000)}\nplumb: the reason [api-config]\n`;

function bash(script: string, env: Record<string, string>, flags = ["-e"]): Promise<number> {
  return new Promise((resolve) => {
    const child = execFile("bash", [...flags, "-c", script], { cwd: dir, env, maxBuffer: 16 * 1024 * 1024 });
    child.on("exit", (code) => resolve(code ?? -1));
  });
}

const githubSteps = async (): Promise<Step[]> =>
  (
    parse(await readFile("examples/ci/github/plumb-plan.yml", "utf8")) as {
      jobs: { plan: { steps: Step[] } };
    }
  ).jobs.plan.steps;

describe("GitHub plan workflow", () => {
  for (const code of [0, 1]) {
    it(`plan exit ${code}: the comment is posted from plan.md, then the job ends with ${code}`, async () => {
      const steps = await githubSteps();
      const planIndex = steps.findIndex((s) => s.id === "plan");
      const comment = steps.findIndex((s) => s.uses?.startsWith("marocchino/sticky-pull-request-comment@"));
      const fail = steps.findIndex((s, i) => i > comment && s.run && /exit "\$CODE"/.test(s.run));
      expect([planIndex < comment, comment < fail]).toEqual([true, true]);

      const bin = await fakePlumb(code);
      const output = join(dir, "github-output");
      const env = { PATH: `${bin}:${process.env.PATH}`, GITHUB_OUTPUT: output };
      expect(await bash(steps[planIndex]!.run!, env)).toBe(0); // the comment step must still run
      expect(await readFile(output, "utf8")).toBe(`exit=${code}\n`);
      const plan = await readFile(join(dir, "plan.md"), "utf8");
      expect(plan).toContain("- update alpha");
      if (code) expect(plan).toMatch(/plumb plan exited 1[\s\S]*refused: source is immutable/);
      else expect(plan).not.toContain("exited");

      // Runs after a failed step too, whenever plan.md exists; the last step fails with plumb's code.
      expect(steps[comment]!.if).toBe("always() && hashFiles('plan.md') != ''");
      expect(steps[comment]!.with?.path).toBe("plan.md");
      expect(steps[fail]!.if).toMatch(
        /^always\(\) && steps\.plan\.outputs\.exit != '' && steps\.plan\.outputs\.exit != '0'$/,
      );
      expect(steps[fail]!.env).toEqual({ CODE: "${{ steps.plan.outputs.exit }}" });
      if (code) expect(await bash(steps[fail]!.run!, { ...env, CODE: String(code) })).toBe(code);
    });
  }
});

describe("GitHub plan workflow, a long log", () => {
  const planStep = async () => (await githubSteps()).find((s) => s.id === "plan")!.run!;
  const run = async (plan: string) => {
    const bin = await fakePlumbPrinting(plan, HUGE_LOG);
    const env = { PATH: `${bin}:${process.env.PATH}`, GITHUB_OUTPUT: join(dir, "github-output") };
    expect(await bash(await planStep(), env)).toBe(0);
    return readFile(join(dir, "plan.md"), "utf8");
  };

  it("a plan at plumb's own limit: the comment stays under GitHub's 65,536 characters, the log left to the job", async () => {
    // The whole log went in: a 1 MB comment, which GitHub refuses (the plan was not shown at all).
    const comment = await run(`<!-- plumb plan -->\n${"p".repeat(64_990)}\n`);
    expect(comment.length).toBeLessThanOrEqual(65_536);
    expect(comment).toContain("**plumb plan exited 1:** its log is in the job log");
  });

  it("a short plan: the end of the log, indented as code (no fence its text can close)", async () => {
    const comment = await run("<!-- plumb plan -->\n### plumb plan\n");
    expect(comment.length).toBeLessThan(15_000);
    expect(comment).toContain("**plumb plan exited 1** (the end of its log):\n\n");
    expect(comment).toContain("    plumb: the reason [api-config]\n");
    // Every line of the log is indented: none opens or closes a fence, none is a mention outside code.
    const log = comment.slice(comment.indexOf("(the end of its log):") + 23);
    for (const line of log.split("\n").filter(Boolean)) expect(line.startsWith("    ")).toBe(true);
    expect(comment.split("\n").some((line) => line.startsWith("```"))).toBe(false);
  });
});

type NoteRequest = { method: string; path: string; token: string; body: string };

/** GitLab's notes API as the plan job uses it: lists `existing`, keeps every POST and PUT. */
async function noteServer(existing: Array<{ id: number; body: string }> = []): Promise<{
  url: string;
  writes: NoteRequest[];
  server: Server;
}> {
  const writes: NoteRequest[] = [];
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (c: Buffer) => (text += c.toString()));
    req.on("end", () => {
      if (req.method === "GET") {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(existing));
        return;
      }
      res.writeHead(req.method === "POST" ? 201 : 200, { "content-type": "application/json" }).end("{}");
      writes.push({
        method: req.method ?? "",
        path: req.url ?? "",
        token: String(req.headers["private-token"]),
        body: (JSON.parse(text) as { body: string }).body,
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, writes, server };
}

/** examples/ci/gitlab's plan job, as GitLab reads it. */
const gitlabPlanJob = async () =>
  (parse(await readFile("examples/ci/gitlab/.gitlab-ci.yml", "utf8")) as { plan: { script: string[] } }).plan;

/** A merge request pipeline's variables, with the stand-in plumb first on PATH and the notes API at `url`. */
const gitlabEnv = (bin: string, url: string) => ({
  PATH: `${bin}:${process.env.PATH}`,
  CI_API_V4_URL: `${url}/api/v4`,
  CI_PROJECT_ID: "7",
  CI_MERGE_REQUEST_IID: "3",
  GITLAB_NOTE_TOKEN: "note-token",
});

describe("GitLab plan job", () => {
  it("a refused plan is posted as a merge request note with plumb's reason, then the job fails with 1", async () => {
    const job = await gitlabPlanJob();
    const bin = await fakePlumb(1);
    const notes = await noteServer([{ id: 41, body: "a reviewer's note" }]);
    try {
      const env = gitlabEnv(bin, notes.url);
      // GitLab runs a job's script lines in one shell with errexit and pipefail.
      expect(await bash(job.script.join("\n"), env, ["-eo", "pipefail"])).toBe(1);
      expect(notes.writes).toHaveLength(1);
      const [note] = notes.writes;
      expect(note!.method).toBe("POST");
      expect(note!.path).toBe("/api/v4/projects/7/merge_requests/3/notes");
      expect(note!.token).toBe("note-token");
      expect(note!.body).toMatch(
        /^<!-- plumb plan -->\n[\s\S]*- update alpha[\s\S]*plumb plan exited 1[\s\S]*refused: source is immutable/,
      );
    } finally {
      notes.server.close();
    }
  });
});

describe("GitLab plan job, a long log", () => {
  it("the note stays under 65,536 characters: the log is left to the job log when the plan is long", async () => {
    const job = await gitlabPlanJob();
    const bin = await fakePlumbPrinting(`<!-- plumb plan -->\n${"p".repeat(64_990)}\n`, HUGE_LOG);
    const notes = await noteServer();
    try {
      const env = gitlabEnv(bin, notes.url);
      expect(await bash(job.script.join("\n"), env, ["-eo", "pipefail"])).toBe(1);
      expect(notes.writes).toHaveLength(1);
      expect(notes.writes[0]!.body.length).toBeLessThanOrEqual(65_536);
      expect(notes.writes[0]!.body).toContain("its log is in the job log");
    } finally {
      notes.server.close();
    }
  });
});

describe("GitLab plan job, second pipeline", () => {
  it("edits the plan note of the merge request in place instead of adding another", async () => {
    const job = await gitlabPlanJob();
    const bin = await fakePlumb(0);
    const notes = await noteServer([
      { id: 41, body: "a reviewer's note" },
      { id: 42, body: "<!-- plumb plan -->\n### plumb plan\n(old)" },
    ]);
    try {
      const env = gitlabEnv(bin, notes.url);
      expect(await bash(job.script.join("\n"), env, ["-eo", "pipefail"])).toBe(0);
      expect(notes.writes.map((w) => `${w.method} ${w.path}`)).toEqual([
        "PUT /api/v4/projects/7/merge_requests/3/notes/42",
      ]);
      expect(notes.writes[0]!.body).toContain("- update alpha");
    } finally {
      notes.server.close();
    }
  });
});

describe("GitHub apply workflow", () => {
  it("a failed apply still writes its Markdown for the pull-request comment, then the job fails with plumb's code", async () => {
    const steps = (
      parse(await readFile("examples/ci/github/plumb-apply.yml", "utf8")) as {
        jobs: { apply: { steps: Step[] } };
      }
    ).jobs.apply.steps;
    const apply = steps.findIndex((s) => s.id === "apply");
    const comment = steps.findIndex((s) => s.name === "Comment the result on the merged pull request");
    const fail = steps.findIndex((s) => s.name === "Fail unless apply converged");
    expect([apply < comment, comment < fail]).toEqual([true, true]);
    expect(steps[apply]!.run).toContain("--output markdown > apply.md");
    const bin = await fakePlumb(1);
    const output = join(dir, "github-output");
    expect(
      await bash(steps[apply]!.run!, { PATH: `${bin}:${process.env.PATH}`, GITHUB_OUTPUT: output }),
    ).toBe(0);
    expect(await readFile(output, "utf8")).toBe("exit=1\n");
    expect(await readFile(join(dir, "apply.md"), "utf8")).toContain("- update alpha");
    expect(steps[comment]!.if).toBe("always() && hashFiles('apply.md') != ''");
    expect(steps[comment]!.run).toContain("gh pr comment");
    expect(await bash(steps[fail]!.run!, { PATH: process.env.PATH ?? "", CODE: "1" })).toBe(1);
  });
});
