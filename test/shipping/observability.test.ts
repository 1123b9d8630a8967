import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parser } from "@prometheus-io/lezer-promql";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { startControlPlane } from "../../src/control-plane/server.js";
import { startController } from "../../src/controller/controller.js";
import { fastControllerOptions } from "../controller/harness.js";
import { container, writeDoc } from "../controller/support.js";

// examples/kubernetes/alerts.yaml (a Prometheus rule file) and dashboard.json (Grafana): the rule
// file has the structure `promtool check rules` reads, every query parses with Prometheus' own
// PromQL grammar (@prometheus-io/lezer-promql), and every metric they name is one a real
// controller serves at /metrics.

/** The metric names a query selects; throws on a PromQL syntax error, naming where. */
function metricsOf(expr: string): string[] {
  const tree = parser.parse(expr);
  const names: string[] = [];
  tree.iterate({
    enter(node) {
      if (node.type.isError) throw new Error(`PromQL syntax error at ${node.from} in: ${expr}`);
      if (node.name === "Identifier" && node.node.parent?.name === "VectorSelector")
        names.push(expr.slice(node.from, node.to));
    },
  });
  return names;
}

type Rule = Record<string, unknown> & { alert: string; expr: string };
type Dashboard = {
  uid: string;
  panels: Array<{ id: number; type: string; title: string; targets: Array<{ expr: string; refId: string }> }>;
};

const RULE_KEYS = new Set(["alert", "expr", "for", "keep_firing_for", "labels", "annotations"]);
const DURATION = /^(\d+(ms|s|m|h|d|w|y))+$/;

const rules = parse(await readFile("examples/kubernetes/alerts.yaml", "utf8")) as {
  groups: Array<{ name: string; rules: Rule[] }>;
};
const dashboard = JSON.parse(await readFile("examples/kubernetes/dashboard.json", "utf8")) as Dashboard;
/** Grafana's variables as Prometheus would see them once Grafana fills them in. */
const grafanaQuery = (expr: string) =>
  expr.replace(/\$__rate_interval|\$__interval/g, "5m").replace(/\$namespace/g, "plumb");

let served: Set<string>;
beforeAll(async () => {
  // The metric families of a real controller's /metrics (histograms as their three series).
  const dir = await mkdtemp(join(tmpdir(), "plumb-metrics-"));
  const cp = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
  await writeDoc(dir, "a.yaml", container("alpha", "img/alpha:1"));
  const controller = await startController(
    fastControllerOptions(cp, { source: { kind: "dir", dir }, listen: { host: "127.0.0.1", port: 0 } }),
  );
  const text = await (await fetch(`${controller.url}/metrics`)).text();
  await controller.stop(1_000);
  await cp.stop();
  await rm(dir, { recursive: true, force: true });
  served = new Set(
    [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap(([, name, type]) =>
      type === "histogram" ? [`${name}_bucket`, `${name}_sum`, `${name}_count`, name!] : [name!],
    ),
  );
});

describe("alerts.yaml", () => {
  it("has the structure of a Prometheus rule file, every expression parses", () => {
    expect(Object.keys(rules)).toEqual(["groups"]);
    const names = new Set<string>();
    for (const group of rules.groups) {
      expect(typeof group.name).toBe("string");
      for (const rule of group.rules) {
        for (const key of Object.keys(rule)) expect(RULE_KEYS.has(key), `${rule.alert}: ${key}`).toBe(true);
        expect(rule.alert).toMatch(/^[A-Za-z_][A-Za-z0-9_]*$/);
        expect(names.has(rule.alert), `${rule.alert} twice`).toBe(false);
        names.add(rule.alert);
        if (rule.for !== undefined) expect(rule.for).toMatch(DURATION);
        for (const map of [rule.labels, rule.annotations])
          for (const value of Object.values(map as Record<string, unknown>))
            expect(typeof value).toBe("string");
        expect((rule.labels as { severity?: string }).severity).toMatch(/^(critical|warning)$/);
        expect(metricsOf(rule.expr).length, rule.alert).toBeGreaterThan(0);
      }
    }
  });

  it("alerts on the control plane down, reconcile failures, prune blocked, no leader and drift", () => {
    const byMetric = (metric: string) =>
      rules.groups.flatMap((g) => g.rules).filter((r) => metricsOf(r.expr).includes(metric));
    for (const metric of [
      "plumb_api_up",
      "plumb_reconcile_total",
      "plumb_prune_blocked_total",
      "plumb_leader",
      "plumb_objects",
    ])
      expect(byMetric(metric).length, metric).toBeGreaterThan(0);
  });

  it("names only metrics the controller serves", () => {
    expect(served.has("plumb_api_up")).toBe(true);
    const named = rules.groups.flatMap((g) => g.rules.flatMap((r) => metricsOf(r.expr)));
    expect(named.filter((m) => !served.has(m))).toEqual([]);
  });

  it("the checks can fail: a syntax error and an unknown metric are caught", () => {
    expect(() => metricsOf("sum(rate(plumb_reconcile_total[5m])")).toThrow(/syntax error/);
    expect(metricsOf("plumb_reconciles_total > 0").filter((m) => !served.has(m))).toEqual([
      "plumb_reconciles_total",
    ]);
  });
});

describe("dashboard.json", () => {
  it("is a Grafana dashboard whose queries parse and name only served metrics", () => {
    expect(dashboard.uid).toBe("plumb-controller");
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const named = new Set<string>();
    for (const panel of dashboard.panels) {
      expect(panel.targets.length, panel.title).toBeGreaterThan(0);
      for (const target of panel.targets) for (const m of metricsOf(grafanaQuery(target.expr))) named.add(m);
    }
    expect([...named].filter((m) => !served.has(m))).toEqual([]);
    // Every metric family the controller serves is on the dashboard.
    const families = [...served].filter((m) => !/_(sum|count)$/.test(m) && !served.has(`${m}_bucket`));
    expect(families.filter((m) => !named.has(m))).toEqual([]);
  });
});
