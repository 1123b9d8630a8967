import { type Static, Type } from "@sinclair/typebox";
import { C_IDENTIFIER_PATTERN, DNS_LABEL_PATTERN, FreeForm, Nullable, StringMap } from "./common.js";

// Nested Kubernetes-style shapes of spec 2.4. Names are camelCase as in Kubernetes.

const LocalObjectReference = Type.Object(
  { name: Type.String({ minLength: 1, description: "Name of the referenced secret." }) },
  {
    additionalProperties: false,
    description: "Reference to a secret of the container-registry credentials type.",
  },
);
type LocalObjectReference = Static<typeof LocalObjectReference>;

const Volume = Type.Object(
  {
    name: Type.String({
      pattern: DNS_LABEL_PATTERN,
      maxLength: 63,
      description: "Volume name: a DNS label, unique in the pod.",
    }),
    configMap: Type.Optional(FreeForm("Kubernetes configMap volume source (free-form).")),
    secret: Type.Optional(FreeForm("Kubernetes secret volume source (free-form).")),
    emptyDir: Type.Optional(FreeForm("Kubernetes emptyDir volume source (free-form).")),
    persistentVolumeClaim: Type.Optional(
      FreeForm("Kubernetes persistentVolumeClaim volume source (free-form)."),
    ),
    nfs: Type.Optional(FreeForm("Kubernetes nfs volume source (free-form).")),
    projected: Type.Optional(FreeForm("Kubernetes projected volume source (free-form).")),
    downwardAPI: Type.Optional(FreeForm("Kubernetes downwardAPI volume source (free-form).")),
    csi: Type.Optional(FreeForm("Kubernetes csi volume source (free-form).")),
  },
  { additionalProperties: false, description: "A pod volume." },
);
type Volume = Static<typeof Volume>;

const VolumeMount = Type.Object(
  {
    name: Type.String({ minLength: 1, description: "Name of a volume declared in `volumes`." }),
    mountPath: Type.String({
      minLength: 1,
      description: "Path inside the container where the volume is mounted.",
    }),
    subPath: Type.Optional(Type.String({ description: "Sub-path inside the volume to mount." })),
    mountPropagation: Type.Optional(Type.String({ description: "Mount propagation mode." })),
    readOnly: Type.Optional(Type.Boolean({ description: "Mount read-only." })),
    subPathExpr: Type.Optional(
      Type.String({ description: "Expanded sub-path using environment variables." }),
    ),
  },
  { additionalProperties: false, description: "Mount of a declared volume into a container." },
);
type VolumeMount = Static<typeof VolumeMount>;

const EnvVar = Type.Object(
  {
    name: Type.String({ pattern: C_IDENTIFIER_PATTERN, description: "Variable name: a C identifier." }),
    value: Type.Optional(Nullable(Type.String(), "Value; defaults to the empty string.")),
    valueFrom: Type.Optional(
      FreeForm("Source of the value (free-form); cannot be used if `value` is not empty."),
    ),
  },
  { additionalProperties: false, description: "Environment variable of a container." },
);
type EnvVar = Static<typeof EnvVar>;

const ResourceRequirements = Type.Object(
  {
    limits: Type.Optional(StringMap("Maximum compute resources, e.g. {cpu: 500m, memory: 256Mi}.")),
    requests: Type.Optional(StringMap("Minimum compute resources.")),
  },
  { additionalProperties: false, description: "Compute resources of a container." },
);
type ResourceRequirements = Static<typeof ResourceRequirements>;

const Container = Type.Object(
  {
    name: Type.String({
      pattern: DNS_LABEL_PATTERN,
      maxLength: 63,
      description: "Container name: a DNS label.",
    }),
    image: Type.String({ minLength: 1, description: "Container image." }),
    imagePullPolicy: Type.Optional(
      Type.Union([Type.Literal("Always"), Type.Literal("Never"), Type.Literal("IfNotPresent")], {
        description: "When to pull the image.",
      }),
    ),
    command: Type.Optional(
      Type.Array(Type.String(), { description: "Entrypoint array (not run in a shell)." }),
    ),
    args: Type.Optional(Type.Array(Type.String(), { description: "Arguments to the entrypoint." })),
    workingDir: Type.Optional(Type.String({ description: "Working directory." })),
    env: Type.Optional(Type.Array(EnvVar, { description: "Environment variables." })),
    envFrom: Type.Optional(
      Type.Array(Type.Record(Type.String(), Type.Unknown()), {
        description: "Sources of environment variables (free-form).",
      }),
    ),
    resources: Type.Optional(ResourceRequirements),
    volumeMounts: Type.Optional(
      Type.Array(VolumeMount, { description: "Volumes mounted into the container." }),
    ),
    securityContext: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), { description: "Security context (free-form)." }),
    ),
    restartPolicy: Type.Optional(
      Type.Union([Type.Literal("Always"), Type.Literal("OnFailure")], {
        description: "Restart policy (for sidecars).",
      }),
    ),
  },
  { additionalProperties: false, description: "An init container or sidecar." },
);
type Container = Static<typeof Container>;

const cpu = (max: number, description: string) =>
  Type.Optional(
    Nullable(
      Type.Number({ minimum: 0.1, maximum: max }),
      `${description} In cores (${0.1} to ${max}); rounded half up to one decimal.`,
    ),
  );
// Replicas, memory, storage and connections are never negative: Kubernetes refuses a negative
// quantity or replica count, and the control plane a negative value (docs/control-plane.md).
const int = (description: string) => Type.Optional(Nullable(Type.Integer({ minimum: 0 }), description));
const num = (description: string) => Type.Optional(Nullable(Type.Number({ minimum: 0 }), description));

const DEPRECATED = "Deprecated: marked as not to be used by the control plane.";

export { CPU_FIELDS } from "./constants.js";

export const ResourceSpec = Type.Object(
  {
    min_scale: int("Minimum number of replicas."),
    max_scale: int("Maximum number of replicas."),
    cpu: cpu(8, "CPU request of the API server."),
    cpu_limit: cpu(16, "CPU limit of the API server; defaults to 2 x cpu."),
    memory_mb: int("Memory request of the API server, in MB."),
    memory_limit_mb: int("Memory limit of the API server, in MB; defaults to 2 x memory_mb."),
    queue_min_scale: int("Minimum queue worker replicas; defaults to min_scale."),
    queue_max_scale: int("Maximum queue worker replicas; defaults to max_scale."),
    queue_cpu: cpu(8, "CPU request of a queue worker; defaults to cpu."),
    queue_cpu_limit: cpu(16, "CPU limit of a queue worker; defaults to 2 x queue_cpu."),
    queue_memory_mb: int("Memory request of a queue worker, in MB; defaults to memory_mb."),
    queue_memory_limit_mb: int("Memory limit of a queue worker, in MB; defaults to 2 x queue_memory_mb."),
    redis_cpu: cpu(8, "CPU request of Redis."),
    redis_cpu_limit: cpu(16, "CPU limit of Redis; defaults to 2 x redis_cpu."),
    redis_memory_mb: int("Memory request of Redis, in MB."),
    redis_memory_limit_mb: int("Memory limit of Redis, in MB; defaults to redis_memory_mb."),
    db_cpu: num("CPU request of the database, in cores; rounded half up to one decimal."),
    db_cpu_limit: num("CPU limit of the database; defaults to 2 x db_cpu."),
    db_memory_mb: int("Memory request of the database, in MB."),
    db_memory_limit_mb: int("Memory limit of the database, in MB; defaults to 2 x db_memory_mb."),
    db_storage_gi: int("Database storage, in GiB."),
    db_max_connections: int("Maximum database connections."),
    labels: Type.Optional(StringMap("Extra labels on created resources.")),
    annotations: Type.Optional(StringMap("Extra annotations on created resources.")),
    service_account_name: Type.Optional(
      Nullable(Type.String(), "Service account; must already exist in the target namespace."),
    ),
    image_pull_secrets: Type.Optional(
      Nullable(Type.Array(LocalObjectReference), "Container-registry credential secrets."),
    ),
    volumes: Type.Optional(Nullable(Type.Array(Volume), "Pod volumes.")),
    volume_mounts: Type.Optional(Nullable(Type.Array(VolumeMount), "Volume mounts of the main container.")),
    init_containers: Type.Optional(
      Nullable(Type.Array(Container), "Containers run to completion before the main container starts."),
    ),
    sidecars: Type.Optional(Nullable(Type.Array(Container), "Containers run alongside the main container.")),
    orchestrator_cpu: num(DEPRECATED),
    orchestrator_cpu_limit: num(DEPRECATED),
    orchestrator_memory_mb: int(DEPRECATED),
    orchestrator_memory_limit_mb: int(DEPRECATED),
    orchestrator_min_scale: int(DEPRECATED),
    orchestrator_max_scale: int(DEPRECATED),
    executor_cpu: num(DEPRECATED),
    executor_cpu_limit: num(DEPRECATED),
    executor_memory_mb: int(DEPRECATED),
    executor_memory_limit_mb: int(DEPRECATED),
  },
  {
    additionalProperties: false,
    description:
      "Compute resources of the deployment (external_container). Sending it replaces the whole stored spec and creates a revision.",
  },
);
export type ResourceSpec = Static<typeof ResourceSpec>;
