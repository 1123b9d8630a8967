import { CPU_FIELDS, RESOURCE_ORDERED_PAIRS } from "../../schema/constants.js";
import { needsCpuRounding, roundCpu } from "./cpu.js";
import { storedResourceNumbers, type StoredNumber } from "./resource-defaults.js";
import type { FieldPath } from "../locate.js";
import { present, type Raw, records, type Report, reportDuplicateNames } from "./rule-helpers.js";
import { suggest } from "../schema-check.js";

const BASE = ["spec", "source_config", "resource_spec"];

/**
 * A minimum of replicas above its maximum, a request above its limit (defaults filled as the
 * control plane fills them): Kubernetes refuses such a pod or autoscaler, so the revision would
 * fail to deploy (docs/control-plane.md "Validation and errors"). A warning: the API takes it.
 */
function checkResourceOrder(rs: Raw, report: Report): void {
  const stored = storedResourceNumbers(rs);
  for (const [low, high] of RESOURCE_ORDERED_PAIRS) {
    const [a, b] = [stored.get(low), stored.get(high)];
    // Both filled: the pair they are filled from says it (queue_min_scale from min_scale, ...).
    if (!a || !b || a.value <= b.value || (a.from && b.from) || b.value < 0) continue; // negative: a schema error
    const shown = (name: string, v: StoredNumber) =>
      `${name} ${v.value}${v.from ? ` (its default, from ${v.from})` : ""}`;
    const what = low.endsWith("min_scale")
      ? "a minimum of replicas above its maximum"
      : "a request above its limit";
    // At the field the manifest writes: the lower one, else the upper one.
    report(
      "warning",
      "resource-order",
      [...BASE, a.from ? high : low],
      `${shown(low, a)} is above ${shown(high, b)}: Kubernetes refuses ${what}, so the revision would fail to deploy`,
      "value",
    );
  }
}

/** resource_spec: CPU rounding advice, the order of requests and limits, volumes and mounts, container names, env vars. */
export function checkResourceSpec(rs: Raw, report: Report): void {
  const base = BASE;
  checkResourceOrder(rs, report);
  for (const key of CPU_FIELDS) {
    const value = rs[key];
    // Out-of-range values are already errors (bounds apply to the value as sent): no rounding advice.
    const bounded = !key.startsWith("db_");
    const inRange = !bounded || (value as number) >= 0.1;
    if (typeof value === "number" && inRange && needsCpuRounding(value)) {
      report(
        "warning",
        "cpu-rounded",
        [...base, key],
        `${key} ${value} has more than one decimal; the control plane rounds it to ${roundCpu(value)}`,
        "value",
      );
    }
  }
  const volumes = records(rs.volumes)
    .map((v) => v.name)
    .filter((n): n is string => typeof n === "string");
  reportDuplicateNames(
    report,
    "duplicate-volume",
    "volume",
    records(rs.volumes).map((v, i) => ({ name: v.name, path: [...base, "volumes", i] })),
  );
  const checkMounts = (mounts: unknown, path: FieldPath) =>
    records(mounts).forEach((mount, i) => {
      if (typeof mount.name === "string" && !volumes.includes(mount.name)) {
        report(
          "error",
          "unknown-volume",
          [...path, i, "name"],
          `volume mount names undeclared volume ${mount.name}${suggest(mount.name, volumes)}`,
          "value",
        );
      }
    });
  checkMounts(rs.volume_mounts, [...base, "volume_mounts"]);
  reportDuplicateNames(
    report,
    "duplicate-container",
    "container",
    (["init_containers", "sidecars"] as const).flatMap((group) =>
      records(rs[group]).map((c, i) => ({ name: c.name, path: [...base, group, i] })),
    ),
  );
  for (const group of ["init_containers", "sidecars"] as const) {
    records(rs[group]).forEach((container, i) => {
      const path = [...base, group, i];
      checkMounts(container.volumeMounts, [...path, "volumeMounts"]);
      records(container.env).forEach((env, j) => {
        if (typeof env.value === "string" && env.value !== "" && present(env.valueFrom)) {
          report(
            "error",
            "env-value-conflict",
            [...path, "env", j, "valueFrom"],
            "an env var takes value or valueFrom, not both",
          );
        }
      });
    });
  }
}
