import { expect, it } from "vitest";
import { startController } from "../../src/controller/controller.js";
import { fastControllerOptions, useControllerHarness } from "./harness.js";
import { container, waitFor, writeDoc } from "./support.js";

// The controller says what it knows: nothing is Synced or Healthy while the control plane refuses
// its key (/readyz stays 200: the page and webhook stay routed; plumb_api_up says it), and /status
// (behind a token) never shows secret fingerprints.

const h = useControllerHarness("plumb-health-");
const secrets = [{ name: "TOKEN", valueFrom: { env: "TOKEN_FROM_ENV" } }];
const listen = { host: "127.0.0.1", port: 0 };

it("with a wrong API key: /readyz 200, plumb_api_up 0, nothing reported Synced or Healthy", async () => {
  await writeDoc(h.dir, "a.yaml", container("alpha", "img/alpha:1", { secrets }));
  // First a good run, so the store holds Synced/Healthy records the wrong key must not keep showing.
  h.controller = await startController(
    fastControllerOptions(h.cp, { source: { kind: "dir", dir: h.dir }, env: { TOKEN_FROM_ENV: "v1" } }),
  );
  await waitFor("ready", () => h.controller!.ready());
  expect(h.controller.status().objects[0]).toMatchObject({ sync: "Synced", health: "Healthy" });
  await h.controller.stop(1_000);

  const options = fastControllerOptions(h.cp, { source: { kind: "dir", dir: h.dir }, listen });
  h.controller = await startController({ ...options, api: { ...options.api, apiKey: "wrong-key" } });
  const url = h.controller.url!;
  await waitFor("a failed reconcile recorded", () => h.controller!.status().objects[0]?.sync === "Unknown");
  const ready = await fetch(`${url}/readyz`);
  expect(ready.status).toBe(200);
  expect(await ready.json()).toMatchObject({ ready: true });
  const metrics = await (await fetch(`${url}/metrics`)).text();
  expect(metrics).toMatch(/^plumb_api_up 0$/m);
  expect(metrics).toMatch(/^plumb_objects\{sync="Synced",health="Healthy"\} 0$/m);
  expect(metrics).toMatch(/^plumb_objects\{sync="Unknown",health="Unknown"\} 1$/m);
  const status = (await (await fetch(`${url}/status`)).json()) as { objects: Array<Record<string, unknown>> };
  expect(status.objects[0]).toMatchObject({ sync: "Unknown", health: "Unknown" });
  expect(String(status.objects[0]!.last_error)).toMatch(/401|Invalid token|key/i);
});

it("a right key makes it ready and records the success time; /status needs the token and hides fingerprints", async () => {
  await writeDoc(h.dir, "a.yaml", container("alpha", "img/alpha:1", { secrets }));
  const token = "s3cr3t-status-token-value";
  h.controller = await startController({
    ...fastControllerOptions(h.cp, {
      source: { kind: "dir", dir: h.dir },
      listen,
      env: { TOKEN_FROM_ENV: "v1" },
    }),
    statusToken: token,
  });
  const url = h.controller.url!;
  await waitFor("first reconcile finished", () => h.controller!.ready());
  expect((await fetch(`${url}/readyz`)).status).toBe(200);
  const metrics = await (await fetch(`${url}/metrics`)).text();
  expect(metrics).toMatch(/^plumb_api_up 1$/m);
  expect(metrics).toMatch(/^plumb_leader 1$/m);
  expect(Number(/^plumb_last_successful_sync_timestamp_seconds (\S+)$/m.exec(metrics)?.[1])).toBeGreaterThan(
    1e9,
  );

  const anonymous = await fetch(`${url}/status`);
  expect(anonymous.status).toBe(401);
  expect(anonymous.headers.get("www-authenticate")).toContain("Bearer");
  expect((await fetch(`${url}/status`, { headers: { authorization: "Bearer nope" } })).status).toBe(401);
  const authorized = await fetch(`${url}/status`, { headers: { authorization: `Bearer ${token}` } });
  expect(authorized.status).toBe(200);
  const body = await authorized.text();
  expect(body).toContain('"alpha"');
  expect(body).not.toContain("fingerprint");
  expect(body).not.toContain("scrypt$");
  expect((await fetch(`${url}/healthz`)).status).toBe(200); // probes stay open
});
