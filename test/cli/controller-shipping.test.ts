import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { buildProgram } from "../../src/cli/main.js";

// Docker cannot run here: check that the shipping files parse and only use commands and flags plumb has.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- loosely typed Kubernetes YAML
type K8sSpec = any;

const program = buildProgram();
const command = (name: string): Command | undefined => program.commands.find((c) => c.name() === name);

/** Fails with a readable message for an unknown sub-command or flag in a `plumb ...` invocation. */
function checkInvocation(words: string[], where: string): void {
  const [name, ...rest] = words;
  const sub = command(name ?? "");
  expect(sub, `${where}: unknown command "plumb ${name}"`).toBeDefined();
  const flags = new Set(sub!.options.flatMap((o) => [o.long, o.short].filter(Boolean) as string[]));
  for (const word of rest) {
    if (!word.startsWith("-")) continue;
    expect(flags.has(word.split("=")[0]!), `${where}: plumb ${name} has no flag ${word}`).toBe(true);
  }
}

/** Every `plumb ...` command line in a shell snippet. */
const invocations = (script: string): string[][] =>
  [...script.matchAll(/(?:^|[\s;&|(])plumb ((?:[^\n|;&>]|\\\n)+)/g)].map((m) =>
    m[1]!.replace(/\\\n/g, " ").trim().split(/\s+/),
  );

const yamlFiles = async (dir: string): Promise<string[]> => {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await yamlFiles(path)));
    else if (/\.ya?ml$/.test(entry.name)) out.push(path);
  }
  return out;
};

describe("shipping files", () => {
  it("the Dockerfile is multi-stage, non-root, health-checked, and runs the controller with real flags", async () => {
    const text = await readFile("Dockerfile", "utf8");
    const froms = [...text.matchAll(/^FROM (\S+)(?: AS (\S+))?/gm)];
    expect(froms.map((m) => m[1])).toEqual(["node:20-slim", "node:20-slim"]);
    expect(text).toMatch(/^USER (?!root)\S+/m);
    expect(text).toMatch(/apt-get install[^\n]*\bgit\b/);
    expect(text).toMatch(/^HEALTHCHECK [\s\S]*\/healthz/m);
    expect(JSON.parse(/^ENTRYPOINT (.*)$/m.exec(text)![1]!)).toEqual(["plumb"]);
    const cmd = JSON.parse(/^CMD (.*)$/m.exec(text)![1]!) as string[];
    expect(cmd[0]).toBe("controller");
    checkInvocation(cmd, "Dockerfile CMD");
    expect(cmd.join(" ")).toContain("--listen 0.0.0.0:9400");
    expect(text).toContain("EXPOSE 9400");
    const ignore = await readFile(".dockerignore", "utf8");
    for (const entry of ["node_modules", "dist", ".git"]) expect(ignore.split("\n")).toContain(entry);
  });

  it("every CI and Kubernetes YAML file parses", async () => {
    const files = [...(await yamlFiles("examples/ci")), ...(await yamlFiles("examples/kubernetes"))];
    expect(files.length).toBeGreaterThanOrEqual(5);
    for (const file of files) {
      for (const doc of parseAllDocuments(await readFile(file, "utf8")))
        expect(
          doc.errors.map((e) => e.message),
          file,
        ).toEqual([]);
    }
  });

  it("the CI examples call only real plumb commands and flags, and cover validate, plan, apply and drift", async () => {
    const used = new Set<string>();
    for (const file of await yamlFiles("examples/ci")) {
      const text = await readFile(file, "utf8");
      for (const words of invocations(text).filter((w) => w[0] !== "--global")) {
        if (words[0] === "plumb") continue;
        checkInvocation(words, file);
        used.add(words[0]!);
      }
    }
    expect([...used].sort()).toEqual(["apply", "drift", "plan", "validate"]);
  });

  it("the Kubernetes Deployment runs the controller with real flags, probes and the metrics port", async () => {
    const docs = parseAllDocuments(await readFile("examples/kubernetes/controller.yaml", "utf8")).map(
      (d) => d.toJS() as { kind: string; spec?: K8sSpec },
    );
    expect(docs.map((d) => d.kind)).toEqual(["Secret", "Deployment", "Service"]);
    const container = docs[1]!.spec.template.spec.containers[0];
    checkInvocation(container.args, "kubernetes args");
    const listen = container.args[container.args.indexOf("--listen") + 1] as string;
    const port = Number(listen.split(":").pop());
    expect(container.ports[0].containerPort).toBe(port);
    expect(container.livenessProbe.httpGet.path).toBe("/healthz");
    expect(container.readinessProbe.httpGet.path).toBe("/readyz");
    const keyRef = container.env.find((e: { name: string }) => e.name === "PLUMB_API_KEY").valueFrom
      .secretKeyRef;
    expect(keyRef.name).toBe("plumb");
  });
});
