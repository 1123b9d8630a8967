import { readFile } from "node:fs/promises";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { buildProgram } from "../../src/cli/main.js";
import { SMALL_MEMORY_LIMIT } from "../../src/cli/controller/heap-tuning.js";
import { parseMemoryQuantity } from "../../src/cli/controller/memory-limit.js";
import { invocations, registryInstallsOfPlumb, shellOf, yamlFiles } from "../controller/ci-scripts.js";

// Docker cannot run here: check that the shipping files parse and only use commands and flags plumb has.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- loosely typed Kubernetes YAML
type K8sSpec = any;

const program = await buildProgram();
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

describe("shipping files", () => {
  it("the Dockerfile is multi-stage, non-root, health-checked, and runs the controller with real flags", async () => {
    const text = await readFile("Dockerfile", "utf8");
    // The base is an argument (CI builds an equivalent of node:24-slim from Debian's packages).
    expect(text).toMatch(/^ARG BASE=node:24-slim$/m);
    const froms = [...text.matchAll(/^FROM (\S+)(?: AS (\S+))?/gm)];
    expect(froms.map((m) => m[1])).toEqual(["${BASE}", "${BASE}"]);
    expect(text).toMatch(/^USER (?!root|0\b)\d+$/m); // numeric: runAsNonRoot can check it
    expect(text).toMatch(/apt-get install[^\n]*\bgit\b/);
    // Probes the controller's own --listen (test/shipping/healthcheck.test.ts), not a fixed port.
    expect(/^HEALTHCHECK .*$/m.exec(text)![0]).toContain('CMD ["node", "/app/healthcheck.mjs"]');
    expect(/^HEALTHCHECK .*$/m.exec(text)![0]).not.toContain("9400");
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
      for (const script of shellOf(await readFile(file, "utf8")))
        for (const words of invocations(script)) {
          checkInvocation(words, file);
          used.add(words[0]!);
        }
    }
    expect([...used].sort()).toEqual(["apply", "drift", "plan", "validate"]);
  });

  it("no example installs plumb from the npm registry by its bare name (an unrelated package owns it)", async () => {
    // The detector itself: the lines the examples used to have are caught, honest installs are not.
    expect(registryInstallsOfPlumb("      - run: npm install --global plumb")).toHaveLength(1);
    expect(registryInstallsOfPlumb("npx --yes plumb@0.1.0 validate deployments")).toHaveLength(1);
    expect(registryInstallsOfPlumb("cd x && yarn global add plumb")).toHaveLength(1);
    expect(registryInstallsOfPlumb("npm ci && npm run build && node dist/src/cli/main.js plan")).toEqual([]);
    expect(registryInstallsOfPlumb("npm install ./plumb github:acme/plumb#v0.1.0")).toEqual([]);
    const files = [
      "Dockerfile",
      ...(await yamlFiles("examples/ci")),
      ...(await yamlFiles("examples/kubernetes")),
    ];
    for (const file of files) expect(registryInstallsOfPlumb(await readFile(file, "utf8")), file).toEqual([]);
  });

  it("every CI job that calls plumb runs the image named by PLUMB_IMAGE, set up before the first call", async () => {
    for (const file of await yamlFiles("examples/ci/github")) {
      const workflow = parseAllDocuments(await readFile(file, "utf8"))[0]!.toJS();
      for (const [name, job] of Object.entries<K8sSpec>(workflow.jobs)) {
        const where = `${file} job ${name}`;
        expect(job.env.PLUMB_IMAGE, where).toBe("${{ vars.PLUMB_IMAGE }}");
        const runs: string[] = job.steps.map((s: { run?: string }) => s.run ?? "");
        const setup = runs.findIndex((r) =>
          /docker run [^\n]*"\$PLUMB_IMAGE" "\$@"/.test(r.replace(/\\\n\s*/g, "")),
        );
        const firstCall = runs.findIndex((r) => invocations(r).length > 0);
        expect(setup, `${where}: no step puts a plumb wrapper around the image`).toBeGreaterThanOrEqual(0);
        expect(runs[setup], where).toMatch(/>> "\$GITHUB_PATH"/);
        expect(firstCall, `${where}: plumb is called before it is set up`).toBeGreaterThan(setup);
      }
    }
    const gitlab = parseAllDocuments(await readFile("examples/ci/gitlab/.gitlab-ci.yml", "utf8"))[0]!.toJS();
    expect(gitlab.image).toEqual({ name: "$PLUMB_IMAGE", entrypoint: [""] });
    for (const [name, job] of Object.entries<K8sSpec>(gitlab))
      if (job && typeof job === "object" && "script" in job)
        expect(job.image, `gitlab job ${name}`).toBeUndefined();
  });

  it("the Kubernetes Deployment runs the controller with real flags, probes and the metrics port", async () => {
    const docs = parseAllDocuments(await readFile("examples/kubernetes/controller.yaml", "utf8")).map(
      (d) => d.toJS() as { kind: string; spec?: K8sSpec },
    );
    // The Secret lives in its own file (secret.example.yaml): test/shipping/kubernetes-example.test.ts.
    expect(docs.map((d) => d.kind)).toEqual(["ServiceAccount", "Deployment", "Service"]);
    const container = docs[1]!.spec.template.spec.containers[0];
    checkInvocation(container.args, "kubernetes args");
    const listen = container.args[container.args.indexOf("--listen") + 1] as string;
    const port = Number(listen.split(":").pop());
    expect(container.ports[0].containerPort).toBe(port);
    expect(container.livenessProbe.httpGet.path).toBe("/livez");
    expect(container.readinessProbe.httpGet.path).toBe("/readyz");
    expect(container.args[container.args.indexOf("--api-key-file") + 1]).toBe("/etc/plumb/secrets/api-key");
    // The controller is told its memory limit (it sizes its heap from it: src/cli/controller/heap-tuning.ts),
    // and that limit is small enough for the small-pod settings the memory bench measures.
    const limitRef = container.env.find((e: { name: string }) => e.name === "PLUMB_MEMORY_LIMIT").valueFrom
      .resourceFieldRef;
    expect(limitRef).toEqual({ resource: "limits.memory" });
    const limit = parseMemoryQuantity(container.resources.limits.memory as string);
    expect(limit).toBeLessThanOrEqual(SMALL_MEMORY_LIMIT);
    expect(container.env.find((e: { name: string }) => e.name === "NODE_OPTIONS")).toBeUndefined();
  });

  it("every shipped setup keeps status durable and has one writer at a time", async () => {
    const docs = parseAllDocuments(await readFile("examples/kubernetes/controller.yaml", "utf8")).map(
      (d) => d.toJS() as { kind: string; spec?: K8sSpec },
    );
    const secret = parseAllDocuments(
      await readFile("examples/kubernetes/secret.example.yaml", "utf8"),
    )[0]!.toJS() as {
      stringData: Record<string, string>;
    };
    const deployment = docs[1]!.spec;
    expect(deployment.replicas).toBe(1);
    expect(deployment.strategy.type).toBe("Recreate");
    const container = deployment.template.spec.containers[0];
    // Status outlives the pod: the status branch (the emptyDir holds only the checkout and a copy).
    expect(container.args[container.args.indexOf("--status-branch") + 1]).toBe("plumb-status");
    const env = (name: string): K8sSpec => container.env.find((e: { name: string }) => e.name === name);
    expect(env("PLUMB_GIT_TOKEN").valueFrom.secretKeyRef.key).toBe("git-token");
    expect(container.args[container.args.indexOf("--status-token-file") + 1]).toBe(
      "/etc/plumb/secrets/status-token",
    );
    expect(Object.keys(secret.stringData)).toContain("status-token");

    const apply = parseAllDocuments(await readFile("examples/ci/github/plumb-apply.yml", "utf8"))[0]!.toJS();
    expect(apply.concurrency).toEqual({ group: "plumb-apply", "cancel-in-progress": false });
    expect(apply.permissions.contents).toBe("write");
    const runs = (apply.jobs.apply.steps as Array<{ run?: string }>).map((s) => s.run ?? "").join("\n");
    expect(runs).toContain("--status-branch plumb-status");

    const gitlab = parseAllDocuments(await readFile("examples/ci/gitlab/.gitlab-ci.yml", "utf8"))[0]!.toJS();
    expect(gitlab.apply.resource_group).toBe("plumb-apply");
    expect(gitlab.apply.variables.PLUMB_GIT_TOKEN).toBe("$PLUMB_PUSH_TOKEN");
    expect(gitlab.apply.script.join("\n")).toContain("--status-branch plumb-status");
  });
});
