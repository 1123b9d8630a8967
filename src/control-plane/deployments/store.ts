import { randomBytes, randomUUID } from "node:crypto";
import type { DeploymentSource } from "../../schema/deployment.js";
import { HttpError } from "../http/http-errors.js";
import type { DeploymentRecord, Timing, UploadRecord } from "./record.js";
import type { CreatePlan } from "./rules.js";
import type { PatchPlan } from "./patch-rules.js";
import { isInProgress } from "./revisions.js";
import { addRevision } from "./store/add-revision.js";
import type { StoreChange, StoreSnapshot, TracingProject } from "./store/store-changes.js";

export type { StoreChange, StoreSnapshot } from "./store/store-changes.js";

/** In-memory deployments of every tenant; each write queues a change for the durable journal. */
export class DeploymentStore {
  private readonly byId = new Map<string, DeploymentRecord>();
  private readonly byName = new Map<string, string>();
  private readonly byTenant = new Map<string, Map<string, DeploymentRecord>>();
  private readonly sessions = new Map<string, Map<string, TracingProject>>();
  private readonly uploads = new Map<string, { deploymentId: string }>();
  private pending: StoreChange[] = [];
  private readonly versions = new WeakMap<DeploymentRecord, number>();

  constructor(private readonly timing: Timing) {}

  /** The record, unless it is missing, of another tenant, or its deletion has completed. */
  get(tenantId: string, id: string, now: number): DeploymentRecord | undefined {
    const record = this.byId.get(id);
    if (!record || record.tenantId !== tenantId) return undefined;
    if (record.deletedAt !== undefined && now >= record.deletedAt + this.timing.readyMs) {
      this.forget(record);
      return undefined;
    }
    return record;
  }

  /** Bumped by every change of the record, so a reader can cache what it derived from it. */
  version(record: DeploymentRecord): number {
    return this.versions.get(record) ?? 0;
  }

  /**
   * Deployments of a tenant in creation order, filtered by a case-sensitive name substring; with
   * `paging`, only that page (the walk stops once it is full).
   */
  list(
    tenantId: string,
    now: number,
    nameContains?: string,
    paging: { limit: number; offset: number } = { limit: Infinity, offset: 0 },
  ): DeploymentRecord[] {
    const result: DeploymentRecord[] = [];
    let skip = paging.offset;
    for (const record of this.byTenant.get(tenantId)?.values() ?? []) {
      if (result.length >= paging.limit) break;
      if (!this.get(tenantId, record.id, now)) continue;
      if (nameContains !== undefined && !record.name.includes(nameContains)) continue;
      if (skip > 0) skip--;
      else result.push(record);
    }
    return result;
  }

  create(
    tenantId: string,
    name: string,
    source: DeploymentSource,
    plan: CreatePlan,
    now: number,
  ): DeploymentRecord {
    const existingId = this.byName.get(`${tenantId}\u0000${name}`);
    const existing = existingId === undefined ? undefined : this.get(tenantId, existingId, now);
    if (existing) {
      const why = existing.deletedAt === undefined ? "" : " (it is being deleted; retry shortly)";
      throw new HttpError(409, `A deployment named ${name} already exists${why}.`);
    }
    const record: DeploymentRecord = {
      id: randomUUID(),
      tenantId,
      name,
      source,
      ...plan,
      createdAt: now,
      updatedAt: now,
      revisions: [],
      uploads: [],
    };
    addRevision(record, source, now, this.timing);
    this.index(record);
    this.ensureProject(tenantId, name);
    this.changed(record);
    return record;
  }

  patch(record: DeploymentRecord, plan: PatchPlan, now: number): void {
    if (!plan.changed) return;
    record.sourceConfig = plan.sourceConfig;
    record.sourceRevisionConfig = plan.sourceRevisionConfig;
    record.secretNames = plan.secretNames;
    record.secretReferences = plan.secretReferences;
    record.updatedAt = now;
    if (plan.createsRevision) addRevision(record, plan.revisionSource, now, this.timing);
    this.changed(record);
  }

  /**
   * A push to the tracked branch of a gitrepo deployment with build_on_push (spec 3.2): a new
   * revision built from the pushed commit, as a PATCH's would be.
   */
  buildOnPush(record: DeploymentRecord, commitSha: string | undefined, now: number): void {
    record.updatedAt = now;
    addRevision(record, record.source, now, this.timing, commitSha);
    this.changed(record);
  }

  /**
   * Starts the deletion. A revision still in progress deploys nothing more: it ends INTERRUPTED now
   * (docs/control-plane.md "Revisions"), so a client polling it is not told DEPLOYED.
   */
  delete(record: DeploymentRecord, now: number): void {
    if (record.deletedAt !== undefined) return;
    record.deletedAt = now;
    record.updatedAt = now;
    for (const revision of record.revisions)
      if (isInProgress(revision, now, this.timing.revisionMs))
        revision.interrupted = { at: now, message: `Interrupted: deployment ${record.id} is being deleted` };
    this.changed(record);
  }

  issueUpload(record: DeploymentRecord): UploadRecord {
    const upload: UploadRecord = {
      objectPath: `uploads/${record.id}/${randomUUID()}.tar.gz`,
      token: randomBytes(24).toString("hex"),
      uploaded: false,
      size: 0,
    };
    record.uploads.push(upload);
    this.uploads.set(upload.token, { deploymentId: record.id });
    this.changed(record);
    return upload;
  }

  /** The token was issued and its deployment is there: checked before an upload's body is read. */
  knowsUpload(token: string, now: number): boolean {
    const owner = this.uploads.get(token);
    const record = owner && this.byId.get(owner.deploymentId);
    return record !== undefined && this.get(record.tenantId, record.id, now) !== undefined;
  }

  /** Records a PUT to an upload URL; undefined when the token is unknown or its deployment is gone. */
  receiveUpload(token: string, size: number, now: number): UploadRecord | undefined {
    const owner = this.uploads.get(token);
    const record = owner && this.byId.get(owner.deploymentId);
    if (!record || !this.get(record.tenantId, record.id, now)) return undefined;
    const upload = record.uploads.find((u) => u.token === token);
    if (!upload) return undefined;
    upload.uploaded = true;
    upload.size = size;
    this.changed(record);
    return upload;
  }

  projects(tenantId: string, name?: string): TracingProject[] {
    const all = [...(this.sessions.get(tenantId)?.values() ?? [])];
    return name === undefined ? all : all.filter((p) => p.name === name);
  }

  /** Changes since the last call, oldest first, for the journal. */
  drain(): StoreChange[] {
    const changes = this.pending;
    this.pending = [];
    return changes;
  }

  apply(change: StoreChange): void {
    if (change.k === "dep") {
      // Replaced in place: the maps keep their insertion order, so listings stay in creation
      // order after a replay or an undo.
      const old = this.byId.get(change.v.id);
      for (const upload of old?.uploads ?? []) this.uploads.delete(upload.token);
      this.index(change.v);
    } else {
      this.tenantProjects(change.tenant).set(change.v.name, change.v);
    }
  }

  /** Takes back a change that was never made durable: the record or project disappears. */
  remove(change: StoreChange): void {
    if (change.k === "dep") {
      const record = this.byId.get(change.v.id);
      if (record) this.forget(record);
    } else {
      this.sessions.get(change.tenant)?.delete(change.v.name);
    }
  }

  snapshot(now: number): StoreSnapshot {
    const deployments = [...this.byId.values()].filter((r) => this.get(r.tenantId, r.id, now));
    const sessions = [...this.sessions].flatMap(([tenant, projects]) =>
      [...projects.values()].map((v) => ({ tenant, v })),
    );
    return { deployments, sessions };
  }

  restore(snapshot: StoreSnapshot): void {
    for (const v of snapshot.deployments) this.apply({ k: "dep", v });
    for (const { tenant, v } of snapshot.sessions) this.apply({ k: "session", tenant, v });
  }

  private changed(record: DeploymentRecord) {
    this.versions.set(record, this.version(record) + 1);
    this.pending.push({ k: "dep", v: record });
  }

  private index(record: DeploymentRecord) {
    this.byId.set(record.id, record);
    this.byName.set(`${record.tenantId}\u0000${record.name}`, record.id);
    let tenant = this.byTenant.get(record.tenantId);
    if (!tenant) this.byTenant.set(record.tenantId, (tenant = new Map<string, DeploymentRecord>()));
    tenant.set(record.id, record);
    for (const upload of record.uploads) this.uploads.set(upload.token, { deploymentId: record.id });
  }

  private forget(record: DeploymentRecord) {
    this.byId.delete(record.id);
    const nameKey = `${record.tenantId}\u0000${record.name}`;
    if (this.byName.get(nameKey) === record.id) this.byName.delete(nameKey);
    this.byTenant.get(record.tenantId)?.delete(record.id);
    for (const upload of record.uploads) this.uploads.delete(upload.token);
  }

  private tenantProjects(tenant: string) {
    let projects = this.sessions.get(tenant);
    if (!projects) this.sessions.set(tenant, (projects = new Map<string, TracingProject>()));
    return projects;
  }

  private ensureProject(tenant: string, name: string) {
    const projects = this.tenantProjects(tenant);
    if (projects.has(name)) return;
    const project = { id: randomUUID(), name };
    projects.set(name, project);
    this.pending.push({ k: "session", tenant, v: project });
  }
}
