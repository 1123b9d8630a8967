import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { type ControllerHttp, startControllerHttp } from "../../../src/controller/http/http-server.js";
import type { PageRoutes } from "../../../src/controller/http/page-routes.js";
import { buildObjectPage } from "../../../src/status-page/page-model.js";
import { quietHeader } from "../../../bench/status-page-fixtures.js";

// The status page's routes on the controller's HTTP server: what is public, what needs the token.

const TOKEN = "route-token-77";
let http: ControllerHttp | undefined;
afterEach(async () => {
  await http?.close();
  http = undefined;
});

const routes: PageRoutes = {
  header: () =>
    quietHeader({
      source: { kind: "dir", location: "/m", commit: null },
      control_plane: "http://cp",
      rate_limit: { used: 1, limit: 1000, window_seconds: 10 },
      now: "2026-11-24T00:00:00.000Z",
    }),
  objects: (query) => buildObjectPage([], query),
  detail: async (kind, name) => (name === "known" ? ({ kind, name } as never) : null),
  subscribe: (write) => {
    write("event: hello\ndata: {}\n\n");
    return () => undefined;
  },
};

async function start(page: PageRoutes | undefined, statusToken: string | null = TOKEN) {
  http = await startControllerHttp(
    { host: "127.0.0.1", port: 0 },
    {
      ready: () => true,
      registry: new Registry(),
      status: () => ({}),
      webhookSecret: undefined,
      onWebhook: () => undefined,
      statusToken: statusToken ?? undefined,
      page,
    },
  );
  return (path: string, token?: string) =>
    fetch(`${http!.url}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
}

describe("status page routes", () => {
  it("serves the page, its script and style to anyone, with a strict content security policy", async () => {
    const get = await start(routes);
    for (const [path, type] of [
      ["/", "text/html"],
      ["/ui/status-page.js", "text/javascript"],
      ["/ui/status-page.css", "text/css"],
    ] as const) {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain(type);
      expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      const body = await res.text();
      expect(body).not.toContain(TOKEN);
    }
    expect(await (await get("/")).text()).toContain('<script type="module" src="/ui/status-page.js">');
    expect(await (await get("/ui/status-page.js")).text()).toContain("textContent");
  });

  it("answers the page's data and events only with the status token", async () => {
    const get = await start(routes);
    for (const path of [
      "/ui/api/header",
      "/ui/api/objects",
      "/ui/api/objects/Deployment/known",
      "/ui/events",
    ]) {
      expect((await get(path)).status).toBe(401);
      expect((await get(path, "wrong")).status).toBe(401);
    }
    expect(await (await get("/ui/api/header", TOKEN)).json()).toMatchObject({ role: "leader" });
    expect(await (await get("/ui/api/objects?limit=5", TOKEN)).json()).toMatchObject({ total: 0, limit: 5 });
    expect((await get("/ui/api/objects/Deployment/known", TOKEN)).status).toBe(200);
    const events = await get("/ui/events", TOKEN);
    expect(events.headers.get("content-type")).toBe("text/event-stream");
    const reader = events.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain("event: hello");
    await reader.cancel();
  });

  it("answers 404 for unknown objects and malformed names, and without a token set serves the data openly", async () => {
    const get = await start(routes, null);
    expect((await get("/ui/api/objects/Deployment/unknown")).status).toBe(404);
    expect((await get("/ui/api/objects/%E0%A4%A/x")).status).toBe(404);
    expect((await get("/ui/api/objects/Deployment")).status).toBe(404);
    expect((await get("/ui/api/nothing")).status).toBe(404);
    expect((await get("/ui/api/header")).status).toBe(200);
  });

  it("ends the open event streams when other handlers take over (standby → leader): each page reconnects to the new ones", async () => {
    const standby: PageRoutes = { ...routes, subscribe: () => () => undefined }; // feeds nothing
    const get = await start(standby);
    const events = await get("/ui/events", TOKEN);
    expect(events.status).toBe(200);
    const reader = events.body!.getReader();
    http!.use({
      ready: () => true,
      registry: new Registry(),
      status: () => ({}),
      webhookSecret: undefined,
      onWebhook: () => undefined,
      statusToken: TOKEN,
      page: routes,
    });
    const ended = await Promise.race([
      reader.read().then(({ done }) => (done ? "ended" : "data")),
      new Promise((resolve) => setTimeout(() => resolve("still open"), 5_000)),
    ]);
    expect(ended).toBe("ended");
    const again = (await get("/ui/events", TOKEN)).body!.getReader();
    expect(new TextDecoder().decode((await again.read()).value)).toContain("event: hello");
    await again.cancel();
  });

  it("has no page where no page routes are given (a standby)", async () => {
    const get = await start(undefined);
    expect((await get("/")).status).toBe(404);
    expect((await get("/ui/api/header", TOKEN)).status).toBe(404);
  });
});
