import { Writable } from "node:stream";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { stringify } from "yaml";
import { createLogger, type Logger } from "../../src/logger.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import type { Deployment } from "../../src/schema/deployment.js";
import type { Revision } from "../../src/schema/revision.js";

type Page<T> = { resources: T[]; offset: number };

/** Polls `check` until it returns a truthy value; fails with `what` after `timeoutMs`. No fixed sleeps. */
export async function waitFor<T>(
  what: string,
  check: () => T | Promise<T>,
  timeoutMs = 20_000,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (let delay = 5; ; delay = Math.min(delay * 2, 100)) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ""}`);
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

/** A pino logger whose JSON lines are kept for assertions. */
export function memoryLogger(): {
  logger: Logger;
  lines: () => Array<Record<string, unknown>>;
  text: () => string;
} {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  // Named as `plumb controller` names its logger, so a field that reused pino's `name` would show.
  const logger = createLogger({ level: "debug", name: "plumb-controller" }, stream);
  const text = () => chunks.join("");
  return {
    logger,
    text,
    lines: () =>
      text()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

export const container = (name: string, image: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: "plumb/v1",
  kind: "Deployment",
  metadata: { name },
  spec: { source: "internal_container", source_revision_config: { image_uri: image }, ...extra },
});

/** An internal_source Deployment built from `sourcePath` (relative to its manifest), npm-style. */
export const internalSource = (name: string, sourcePath: string, graph = "langgraph.json") => ({
  apiVersion: "plumb/v1",
  kind: "Deployment",
  metadata: { name },
  spec: {
    source: "internal_source",
    source_path: sourcePath,
    source_config: { install_command: "npm install", build_command: "npm run build" },
    source_revision_config: { graph_config_path: graph },
  },
});

export async function writeDoc(dir: string, file: string, doc: object | string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, file), typeof doc === "string" ? doc : stringify(doc));
}

/** Minimal API calls for assertions, straight over HTTP with the local key. */
export function api(url: string, key = DEFAULT_API_KEY) {
  const call = async <T = unknown>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { "x-api-key": key, ...(body ? { "content-type": "application/json" } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (res.status === 204 ? null : await res.json()) as T;
  };
  return {
    call,
    deployment: async (name: string) => {
      const page = await call<Page<Deployment>>(
        "GET",
        `/v2/deployments?limit=100&name_contains=${encodeURIComponent(name)}`,
      );
      const found = page.resources.find((d) => d.name === name);
      if (!found) throw new Error(`deployment ${name} not found`);
      return found;
    },
    deployments: async () => (await call<Page<Deployment>>("GET", "/v2/deployments?limit=100")).resources,
    revisions: async (id: string) =>
      (await call<Page<Revision>>("GET", `/v2/deployments/${id}/revisions?limit=100`)).resources,
  };
}
