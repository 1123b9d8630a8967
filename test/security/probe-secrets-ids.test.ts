import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createControlPlaneClient } from "../../src/api/control-plane-client.js";
import { ApiError } from "../../src/api/errors.js";
import { createSecretRedactor } from "../../src/api/secret-redactor.js";

// A hostile control plane chooses the ids it answers with. One that named a deployment after a
// secret value (the OPENAI_API_KEY it was sent) had `plumb apply --output json` print it and the
// status record keep it (and the status branch commit it): ids are sent back, never redacted. Seen
// with the built CLI through a proxy that renamed the id. The answer is now refused.

const SECRET = "sk-IDSECRET-0123456789abcdef";
const KEY = "key-0123456789abcdef";
const deployment = (extra: Record<string, unknown>) => ({
  id: "00000000-0000-4000-8000-000000000001",
  tenant_id: "00000000-0000-4000-8000-000000000000",
  name: "alpha",
  source: "external_container",
  source_config: { custom_url: null },
  source_revision_config: { image_uri: "registry.test/app:1" },
  secrets: [],
  created_at: "2025-01-01T00:00:00Z",
  updated_at: "2025-01-01T00:00:00Z",
  status: "READY",
  latest_revision_id: null,
  active_revision_id: null,
  ...extra,
});

let server: Server;
let base = "";
let answer: unknown = null;
beforeAll(async () => {
  server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(answer));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((done) => server.close(done)));

const client = () =>
  createControlPlaneClient({
    apiUrl: base,
    apiKey: KEY,
    retry: { maxAttempts: 1 },
    redactor: createSecretRedactor([SECRET]),
  });

describe("ids a hostile control plane chooses", () => {
  it("refuses a deployment whose id or revision id holds a secret or the API key, naming the field only", async () => {
    for (const [extra, field] of [
      [{ id: SECRET }, "id"],
      [{ active_revision_id: `r-${KEY}` }, "active_revision_id"],
      [{ latest_revision_id: SECRET.slice(0, 20) }, "latest_revision_id"],
    ] as const) {
      answer = deployment(extra);
      const error = await client()
        .getDeployment("d-1")
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).code).toBe("unexpected-response");
      expect((error as ApiError).message).toContain(field);
      expect((error as ApiError).message).not.toContain("IDSECRET");
      expect((error as ApiError).message).not.toContain(KEY);
    }
  });

  it("refuses a page listing one, and takes ids that hold none", async () => {
    answer = { resources: [deployment({}), deployment({ id: SECRET })], offset: 2 };
    await expect(client().listDeployments()).rejects.toThrow(/resources\[1\]\.id holds a secret/);
    answer = deployment({});
    await expect(client().getDeployment("d-1")).resolves.toMatchObject({ name: "alpha" });
  });
});

describe("ids that are also settings", () => {
  it("takes a UUID id equal to a secret value (a deployment's secrets carry the tenant's or another deployment's id)", async () => {
    const tenant = "00000000-0000-4000-8000-000000000000";
    const settings = createControlPlaneClient({
      apiUrl: base,
      apiKey: KEY,
      retry: { maxAttempts: 1 },
      redactor: createSecretRedactor([tenant, "00000000-0000-4000-8000-000000000001"]),
    });
    answer = deployment({});
    await expect(settings.getDeployment("d-1")).resolves.toMatchObject({ tenant_id: tenant });
  });
});
