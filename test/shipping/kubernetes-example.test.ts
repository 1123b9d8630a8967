import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { ServiceAccount, Secret, Service } from "kubernetes-models/v1";
import { Deployment } from "kubernetes-models/apps/v1";
import { Ingress, NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { restrictedViolations } from "./pod-security.js";

// examples/kubernetes as a cluster would take it: every object valid against the Kubernetes API's
// schemas (kubernetes-models), the pod admitted by a namespace enforcing the "restricted" Pod
// Security Standard (checked rule by rule in pod-security.ts), and the shape the issue asks for:
// secrets as files from a Secret kept in its own file, no service-account token, the status token
// set, a NetworkPolicy and an Ingress for the webhook only.

/* eslint-disable @typescript-eslint/no-unsafe-return -- loosely typed Kubernetes YAML */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- loosely typed Kubernetes YAML
type K8s = any;

const DIR = "examples/kubernetes";
const MODELS: Record<string, new (data: K8s) => { validate(): void }> = {
  "v1/ServiceAccount": ServiceAccount,
  "v1/Secret": Secret,
  "v1/Service": Service,
  "apps/v1/Deployment": Deployment,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
  "networking.k8s.io/v1/Ingress": Ingress,
};

async function objectsOf(file: string): Promise<K8s[]> {
  return parseAllDocuments(await readFile(join(DIR, file), "utf8")).map((d): K8s => d.toJS());
}

const files = (await readdir(DIR)).filter((f) => f.endsWith(".yaml") && f !== "alerts.yaml").sort();
const all = (
  await Promise.all(files.map(async (file) => (await objectsOf(file)).map((o) => ({ file, o }))))
).flat();
const one = (kind: string): K8s => {
  const found = all.filter(({ o }) => o.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0]!.o;
};
const deployment = one("Deployment");
const pod = deployment.spec.template.spec;
const container = pod.containers[0];
const arg = (flag: string): string | undefined => {
  const at = container.args.indexOf(flag);
  return at < 0 ? undefined : container.args[at + 1];
};

describe("examples/kubernetes", () => {
  it("every object is valid against the Kubernetes API schemas", () => {
    expect(files).toEqual(["controller.yaml", "ingress.yaml", "network-policy.yaml", "secret.example.yaml"]);
    for (const { file, o } of all) {
      const model = MODELS[`${o.apiVersion}/${o.kind}`];
      expect(model, `${file}: ${o.apiVersion} ${o.kind} has no model here`).toBeDefined();
      expect(() => new model!(o).validate(), `${file}: ${o.kind} ${o.metadata?.name}`).not.toThrow();
    }
    // The check can fail: a wrong type is refused.
    const broken = structuredClone(deployment);
    broken.spec.template.spec.securityContext.runAsNonRoot = "yes";
    expect(() => new Deployment(broken).validate()).toThrow(/runAsNonRoot must be boolean/);
  });

  it("the pod passes the restricted Pod Security Standard, with a read-only root filesystem", () => {
    expect(restrictedViolations(pod)).toEqual([]);
    for (const c of pod.containers) expect(c.securityContext.readOnlyRootFilesystem, c.name).toBe(true);
    // What the controller writes lives on emptyDir volumes: the checkout and status, and /tmp.
    const mounts = new Map<string, string>(
      container.volumeMounts.map((m: K8s) => [m.mountPath as string, m.name as string]),
    );
    const emptyDirs = new Set(pod.volumes.filter((v: K8s) => v.emptyDir).map((v: K8s) => v.name as string));
    const writable = [arg("--workdir")!, "/tmp", container.env.find((e: K8s) => e.name === "HOME").value];
    for (const path of writable) {
      const mount = [...mounts.keys()].find((m) => path === m || path.startsWith(`${m}/`));
      expect(mount && emptyDirs.has(mounts.get(mount)!), `${path} is on an emptyDir`).toBe(true);
    }
    for (const m of container.volumeMounts)
      if (!emptyDirs.has(m.name)) expect(m.readOnly, `${m.mountPath} is read-only`).toBe(true);
  });

  it("the restricted-profile check refuses what the example used to lack, and more", () => {
    const mutated = (change: (spec: K8s) => void): string[] => {
      const spec = structuredClone(pod);
      change(spec);
      return restrictedViolations(spec);
    };
    // The example before this check: no escalation setting, no capability drop, no seccomp profile.
    expect(
      mutated((s) => {
        delete s.securityContext.seccompProfile;
        s.containers[0].securityContext = {};
      }),
    ).toEqual([
      "containers[0].securityContext.allowPrivilegeEscalation: must be false",
      "containers[0].securityContext.seccompProfile.type: must be RuntimeDefault or Localhost (here or the pod's)",
      "containers[0].securityContext.capabilities.drop: must include ALL",
    ]);
    expect(mutated((s) => (s.hostNetwork = true))).toEqual(["hostNetwork: must be unset or false"]);
    expect(mutated((s) => (s.securityContext.runAsUser = 0))).toEqual([
      "securityContext.runAsUser: must not be 0",
    ]);
    expect(mutated((s) => s.volumes.push({ name: "h", hostPath: { path: "/" } }))).toEqual([
      "volumes.h: hostPath volumes are not allowed",
    ]);
    expect(mutated((s) => (s.containers[0].securityContext.capabilities.add = ["SYS_ADMIN"]))).toHaveLength(
      2,
    );
  });

  it("no service-account token; secrets come as files from a Secret kept in its own file", async () => {
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(one("ServiceAccount").automountServiceAccountToken).toBe(false);
    expect(pod.serviceAccountName).toBe(one("ServiceAccount").metadata.name);
    expect((await objectsOf("controller.yaml")).map((o) => o.kind)).not.toContain("Secret");
    const secret = one("Secret");
    for (const value of Object.values<string>(secret.stringData)) expect(value).toMatch(/^replace-with-/);

    const volume = pod.volumes.find((v: K8s) => v.secret);
    expect(volume.secret.secretName).toBe(secret.metadata.name);
    const mount = container.volumeMounts.find((m: K8s) => m.name === volume.name);
    const files = new Map<string, string>(
      volume.secret.items.map((i: K8s) => [i.path as string, i.key as string]),
    );
    for (const flag of ["--api-key-file", "--status-token-file", "--webhook-secret-file"]) {
      const path = arg(flag);
      expect(path, flag).toMatch(new RegExp(`^${mount.mountPath}/`));
      const key = files.get(path!.slice(mount.mountPath.length + 1));
      expect(Object.keys(secret.stringData), `${flag}: its key is in the Secret`).toContain(key);
    }
    // The API key and the status token are never environment variables of the pod.
    const envNames = container.env.map((e: K8s) => e.name as string);
    expect(envNames).not.toContain("PLUMB_API_KEY");
    expect(envNames).not.toContain("PLUMB_STATUS_TOKEN");
    for (const e of container.env)
      if (e.valueFrom?.secretKeyRef)
        expect(Object.keys(secret.stringData)).toContain(e.valueFrom.secretKeyRef.key);
    expect(container.env.every((e: K8s) => !/key|token|secret/i.test(e.name) || e.valueFrom)).toBe(true);
  });

  it("probes: /livez for startup and liveness, /readyz for readiness, on the --listen port", () => {
    expect(container.startupProbe.httpGet.path).toBe("/livez");
    expect(container.livenessProbe.httpGet.path).toBe("/livez");
    expect(container.readinessProbe.httpGet.path).toBe("/readyz");
    const port = container.ports.find((p: K8s) => p.name === container.readinessProbe.httpGet.port);
    expect(`0.0.0.0:${port.containerPort}`).toBe(arg("--listen"));
  });

  it("a NetworkPolicy admits the Ingress and Prometheus to the port, and the Ingress routes only /hooks/git", () => {
    const labels = deployment.spec.template.metadata.labels;
    const policy = one("NetworkPolicy");
    expect(policy.spec.podSelector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
    for (const [key, value] of Object.entries(policy.spec.podSelector.matchLabels))
      expect(labels[key]).toBe(value);
    expect(policy.spec.policyTypes).toEqual(["Ingress", "Egress"]);
    const port = container.ports[0].containerPort;
    expect(policy.spec.ingress.flatMap((r: K8s) => r.ports.map((p: K8s) => p.port))).toEqual([port]);

    const ingress = one("Ingress");
    const service = one("Service");
    const paths = ingress.spec.rules.flatMap((r: K8s) => r.http.paths);
    expect(paths.map((p: K8s) => [p.path, p.pathType])).toEqual([["/hooks/git", "Exact"]]);
    expect(paths[0].backend.service.name).toBe(service.metadata.name);
    const servicePort = service.spec.ports.find((p: K8s) => p.name === paths[0].backend.service.port.name);
    expect(servicePort.targetPort).toBe(container.ports[0].name);
    // The controller answers the Ingress's Host (else 421).
    for (const rule of ingress.spec.rules) expect(arg("--allowed-host")).toBe(rule.host);
  });
});
