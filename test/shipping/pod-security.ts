// The Pod Security Standards' "restricted" profile (which includes "baseline"), rule by rule as the
// Kubernetes documentation lists them, for one pod spec: what a namespace labelled
// pod-security.kubernetes.io/enforce=restricted would refuse. Each violation names its field.

/* eslint-disable @typescript-eslint/no-unsafe-return -- loosely typed Kubernetes YAML */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- loosely typed Kubernetes YAML
type K8s = any;

const BASELINE_CAPABILITIES = new Set(
  "AUDIT_WRITE CHOWN DAC_OVERRIDE FOWNER FSETID KILL MKNOD NET_BIND_SERVICE SETFCAP SETGID SETPCAP SETUID SYS_CHROOT".split(
    " ",
  ),
);
const SAFE_SYSCTLS = new Set([
  "kernel.shm_rmid_forced",
  "net.ipv4.ip_local_port_range",
  "net.ipv4.ip_unprivileged_port_start",
  "net.ipv4.tcp_syncookies",
  "net.ipv4.ping_group_range",
  "net.ipv4.ip_local_reserved_ports",
  "net.ipv4.tcp_keepalive_time",
  "net.ipv4.tcp_fin_timeout",
  "net.ipv4.tcp_keepalive_intvl",
  "net.ipv4.tcp_keepalive_probes",
]);
const SELINUX_TYPES = new Set([
  "",
  "container_t",
  "container_init_t",
  "container_kvm_t",
  "container_engine_t",
]);
const RESTRICTED_VOLUMES = new Set([
  "configMap",
  "csi",
  "downwardAPI",
  "emptyDir",
  "ephemeral",
  "persistentVolumeClaim",
  "projected",
  "secret",
]);

export function restrictedViolations(spec: K8s): string[] {
  const out: string[] = [];
  const bad = (field: string, why: string) => out.push(`${field}: ${why}`);
  const pod = spec.securityContext ?? {};
  const containers: Array<[string, K8s]> = ["initContainers", "containers", "ephemeralContainers"].flatMap(
    (list): Array<[string, K8s]> =>
      (spec[list] ?? []).map((c: K8s, i: number): [string, K8s] => [`${list}[${i}]`, c]),
  );
  const contexts: Array<[string, K8s]> = [
    ["securityContext", pod],
    ...containers.map(([at, c]): [string, K8s] => [`${at}.securityContext`, c.securityContext ?? {}]),
  ];

  // Baseline.
  for (const ns of ["hostNetwork", "hostPID", "hostIPC"])
    if (spec[ns] === true) bad(ns, "must be unset or false");
  for (const [at, sc] of contexts) {
    if (sc.windowsOptions?.hostProcess === true) bad(`${at}.windowsOptions.hostProcess`, "must not be true");
    if (sc.privileged === true) bad(`${at}.privileged`, "must not be true");
    for (const cap of sc.capabilities?.add ?? [])
      if (!BASELINE_CAPABILITIES.has(cap)) bad(`${at}.capabilities.add`, `${cap} is not allowed`);
    const appArmor = sc.appArmorProfile?.type;
    if (appArmor !== undefined && appArmor !== "RuntimeDefault" && appArmor !== "Localhost")
      bad(`${at}.appArmorProfile.type`, `${appArmor} is not allowed`);
    const se = sc.seLinuxOptions;
    if (se && !SELINUX_TYPES.has(se.type ?? ""))
      bad(`${at}.seLinuxOptions.type`, `${se.type} is not allowed`);
    if (se && (se.user || se.role)) bad(`${at}.seLinuxOptions`, "user and role must be unset");
    if (sc.procMount !== undefined && sc.procMount !== "Default") bad(`${at}.procMount`, "must be Default");
    if (sc.seccompProfile?.type === "Unconfined") bad(`${at}.seccompProfile.type`, "must not be Unconfined");
    if (sc.runAsUser === 0) bad(`${at}.runAsUser`, "must not be 0");
    if (sc.runAsNonRoot === false) bad(`${at}.runAsNonRoot`, "must not be false");
  }
  for (const sysctl of pod.sysctls ?? [])
    if (!SAFE_SYSCTLS.has(sysctl.name)) bad("securityContext.sysctls", `${sysctl.name} is not a safe sysctl`);
  for (const [at, c] of containers)
    for (const port of c.ports ?? []) if (port.hostPort) bad(`${at}.ports.hostPort`, "must be unset or 0");

  // Restricted.
  for (const volume of spec.volumes ?? []) {
    const type = Object.keys(volume).find((k) => k !== "name");
    if (!type || !RESTRICTED_VOLUMES.has(type))
      bad(`volumes.${volume.name}`, `${type} volumes are not allowed`);
  }
  for (const [at, c] of containers) {
    const sc = c.securityContext ?? {};
    if (sc.allowPrivilegeEscalation !== false)
      bad(`${at}.securityContext.allowPrivilegeEscalation`, "must be false");
    if (pod.runAsNonRoot !== true && sc.runAsNonRoot !== true)
      bad(`${at}.securityContext.runAsNonRoot`, "must be true (here or in the pod's securityContext)");
    const seccomp = sc.seccompProfile?.type ?? pod.seccompProfile?.type;
    if (seccomp !== "RuntimeDefault" && seccomp !== "Localhost")
      bad(
        `${at}.securityContext.seccompProfile.type`,
        "must be RuntimeDefault or Localhost (here or the pod's)",
      );
    if (!(sc.capabilities?.drop ?? []).includes("ALL"))
      bad(`${at}.securityContext.capabilities.drop`, "must include ALL");
    for (const cap of sc.capabilities?.add ?? [])
      if (cap !== "NET_BIND_SERVICE") bad(`${at}.securityContext.capabilities.add`, `${cap} is not allowed`);
  }
  return out;
}
