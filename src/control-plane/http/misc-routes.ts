import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Clock } from "../../clock.js";
import type { DeploymentStore } from "../deployments/store.js";
import { badRequest, HttpError } from "./http-errors.js";
import type { Integration, Listener } from "../options.js";
import { FASTAPI_GET } from "./method-not-allowed.js";
import { lastQueryString, page, parsePaging } from "./paging.js";
import type { RouteFlags } from "./request-guards.js";

export type MiscRouteDeps = {
  store: DeploymentStore;
  clock: Clock;
  listeners: Listener[];
  integrations: Integration[];
  mode: string;
  region: string;
  uploadLimit: number;
  tenantOf(request: FastifyRequest): string;
  commit(): Promise<void>;
};

/** Listeners, integrations, tracing projects, the upload target and /info. */
export function registerMiscRoutes(app: FastifyInstance, deps: MiscRouteDeps): void {
  app.get("/v2/listeners", FASTAPI_GET, async (request) => page(deps.listeners, parsePaging(request.query)));
  app.get("/v1/integrations/gitrepo/install", FASTAPI_GET, async () => deps.integrations);
  app.get("/api/v1/sessions", FASTAPI_GET, async (request) => {
    return deps.store.projects(deps.tenantOf(request), lastQueryString(request.query, "name"));
  });
  const info: RouteFlags = { public: true, faults: false };
  app.get("/info", { config: info }, async () => ({
    name: "plumb local control plane",
    version: "0.1.0",
    mode: deps.mode,
    region: deps.region,
  }));

  // The upload URL is a capability (like a signed object-store URL): its token authorises the PUT,
  // so it needs no API key. Any content type is accepted here and only here.
  void app.register(async (uploads) => {
    uploads.removeAllContentTypeParsers();
    uploads.addContentTypeParser(
      "*",
      { parseAs: "buffer", bodyLimit: deps.uploadLimit },
      (_req, body, done) => done(null, body),
    );
    uploads.put<{ Params: { token: string } }>(
      "/uploads/:token",
      {
        config: { public: true },
        bodyLimit: deps.uploadLimit,
        // An unknown URL is refused before its body (up to 64 MiB, kept whole) is read.
        onRequest: (request, _reply, done) =>
          deps.store.knowsUpload(request.params.token, deps.clock.now())
            ? done()
            : done(new HttpError(404, "Unknown or expired upload URL.")),
      },
      async (request) => {
        const body = request.body;
        if (!Buffer.isBuffer(body) || body.length < 2 || body[0] !== 0x1f || body[1] !== 0x8b)
          throw badRequest("The upload must be a gzip-compressed tarball (.tar.gz)");
        const upload = deps.store.receiveUpload(request.params.token, body.length, deps.clock.now());
        if (!upload) throw new HttpError(404, "Unknown or expired upload URL.");
        await deps.commit();
        return { object_path: upload.objectPath, size: upload.size };
      },
    );
  });
}
