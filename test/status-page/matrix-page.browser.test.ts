import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { type Browser, chromium } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { quietHeader } from "../../bench/status-page-fixtures.js";
import { loadPageScript } from "../../src/status-page/page-assets.js";
import { PAGE_CSS, PAGE_HTML, PAGE_SCRIPT_PATH, PAGE_STYLE_PATH } from "../../src/status-page/page-html.js";
import {
  buildMatrixPage,
  MATRIX_API_PATH,
  type MatrixEnvironment,
  parseMatrixQuery,
} from "../../src/status-page/matrix-model.js";
import { buildObjectPage, buildObjectRow, parseObjectQuery } from "../../src/status-page/page-model.js";
import type { ObjectStatus } from "../../src/status/status-types.js";
import { status } from "../controller/fixtures.js";

// The matrix view of the status page in Chromium (as status-page.browser.test.ts; skipped off CI
// without a browser): the page's own HTML, script and models behind a plain HTTP server, as the
// controller serves them (its routes answer MATRIX_API_PATH with buildMatrixPage).

const CHROMIUM = process.env.PLUMB_CHROMIUM ?? "/usr/bin/chromium";
const haveBrowser = existsSync(CHROMIUM) || Boolean(process.env.CI);

const gitrepo = (name: string, ref: string, extra: Partial<ObjectStatus> = {}) =>
  status(name, { applied_spec: { source_revision_config: { repo_ref: ref } }, ...extra });

const TWO_ENVIRONMENTS: MatrixEnvironment[] = [
  {
    name: "staging",
    name_suffix: "-staging",
    records: [
      gitrepo("support-agent-staging", "v1.4.2", {
        checks: {
          revision_id: "rev-support-agent-staging",
          at: "2026-11-25T19:00:00.000Z",
          runs: 4,
          passed: 4,
          pass_ratio: 1,
          latency_ms: { p50: 80, p95: 120, max: 120 },
          failures: [],
        },
      }),
      gitrepo("billing-staging", "v2.0.0"),
    ],
  },
  {
    name: "prod",
    promotion_from: "staging",
    records: [gitrepo("support-agent", "v1.4.1"), gitrepo("billing", "v2.0.0")],
  },
];

let browser: Browser;
let server: Server | undefined;

beforeAll(async () => {
  if (!haveBrowser) return;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
    ],
  });
});
afterAll(async () => {
  await browser?.close();
});
/** Stops the page's server, live-event streams and all. */
async function stop() {
  const running = server;
  server = undefined;
  if (!running) return;
  const closed = new Promise((resolve) => running.close(resolve));
  running.closeAllConnections();
  await closed;
}
afterEach(stop);

/** The data routes asked, with their query (`?env=` included). */
let asked: string[] = [];

/**
 * The page over `environments` (none: a controller without environments, no matrix route). As the
 * controller's routes, each data route answers for `?env=NAME`, else the first environment.
 */
async function serve(environments: MatrixEnvironment[] | null): Promise<string> {
  asked = [];
  const shownOf = (url: URL) => {
    const all = environments ?? TWO_ENVIRONMENTS;
    return all.find((e) => e.name === url.searchParams.get("env")) ?? all[0]!;
  };
  const objectsOf = (environment: MatrixEnvironment) =>
    [...environment.records].map((s) => ({
      kind: s.kind,
      name: s.name,
      status: s,
      manifest: { file: `${s.name}.yaml`, line: 2 },
      activity: undefined,
    }));
  const headerOf = (url: URL) =>
    environments
      ? quietHeader({
          environment: shownOf(url).name,
          environments: environments.map((e) => ({ environment: e.name, role: "leader" })),
        })
      : quietHeader();
  const http = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname.startsWith("/ui/api/")) asked.push(`${url.pathname}${url.search}`);
    const pageObjects = objectsOf(shownOf(url));
    const json = (body: unknown, code = 200) => {
      res.writeHead(code, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === "/") res.end(PAGE_HTML);
    else if (url.pathname === PAGE_SCRIPT_PATH) {
      res.writeHead(200, { "content-type": "text/javascript" });
      res.end(loadPageScript());
    } else if (url.pathname === PAGE_STYLE_PATH) {
      res.writeHead(200, { "content-type": "text/css" });
      res.end(PAGE_CSS);
    } else if (url.pathname === "/ui/api/header") json(headerOf(url));
    else if (url.pathname === "/ui/api/objects")
      json(buildObjectPage(pageObjects, parseObjectQuery(url.searchParams)));
    else if (url.pathname.startsWith("/ui/api/objects/")) {
      const name = decodeURIComponent(url.pathname.split("/").pop() ?? "");
      const found = pageObjects.find((o) => o.name === name);
      if (!found) json({ detail: "not found" }, 404);
      else json({ object: buildObjectRow(found), revisions: [], revisions_error: null, last_plan: [] });
    } else if (url.pathname === MATRIX_API_PATH && environments)
      json(buildMatrixPage(environments, parseMatrixQuery(url.searchParams)));
    else if (url.pathname === "/ui/events") res.writeHead(200, { "content-type": "text/event-stream" });
    else json({ detail: "not found" }, 404);
  });
  server = http;
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}/`;
}

describe.skipIf(!haveBrowser)("the environment matrix in Chromium", () => {
  it("shows deployment × environment in promotion order and marks the environment that lags", async () => {
    const page = await browser.newPage();
    await page.goto(await serve(TWO_ENVIRONMENTS));
    await expect.poll(() => page.locator("#matrix").isVisible()).toBe(true);
    const headers = await page.locator("#matrix-head th").allTextContents();
    expect(headers).toEqual(["Deployment", "staging", "prodpromoted from staging"]);
    const support = page.locator("#matrix-rows tr", { hasText: "support-agent" });
    const cells = support.locator("td");
    expect(await cells.nth(0).textContent()).toContain("v1.4.2");
    expect(await cells.nth(0).textContent()).toContain("checks 4/4 · p95 120 ms");
    expect(await cells.nth(1).textContent()).toContain("v1.4.1");
    expect(await cells.nth(1).textContent()).toContain("behind staging");
    expect(await cells.nth(1).getAttribute("class")).toBe("lags");
    const billing = page.locator("#matrix-rows tr", { hasText: "billing" }).locator("td");
    expect(await billing.nth(1).getAttribute("class")).toBeNull();
    expect(await page.locator("#matrix-count").textContent()).toBe(
      "2 of 2 deployments shown (2 in all); 1 with an environment behind the one it is promoted from",
    );
    // PLUMB_UPDATE_SCREENSHOTS=1 refreshes the one docs/environments.md shows.
    if (process.env.PLUMB_UPDATE_SCREENSHOTS)
      await page.screenshot({ path: join("docs", "images", "status-page-matrix.png"), fullPage: true });
    await page.getByLabel("Only deployments where an environment lags").check();
    await expect.poll(() => page.locator("#matrix-rows tr").count()).toBe(1);
    expect(await page.locator("#matrix-rows").textContent()).toContain("support-agent");
  });

  it("shows a checks record that contradicts itself as invalid, escaped, never its figures", async () => {
    const edited = {
      revision_id: "rev-a",
      at: "2026-11-25T19:00:00.000Z",
      runs: 10,
      passed: 3,
      pass_ratio: 1,
      latency_ms: { p50: 80, p95: 120, max: 120 },
    };
    const page = await browser.newPage();
    await page.goto(
      await serve([
        { name: "dev", records: [gitrepo("a", "v1", { active_revision_id: "rev-a", checks: edited })] },
        {
          name: "prod",
          promotion_from: "dev",
          records: [
            gitrepo("a", "v1", {
              active_revision_id: "rev-a",
              checks: { ...edited, runs: "<img src=x>" as never },
            }),
          ],
        },
      ]),
    );
    await expect.poll(() => page.locator("#matrix").isVisible()).toBe(true);
    const cells = page.locator("#matrix-rows tr", { hasText: "a" }).locator("td");
    await expect.poll(() => cells.count()).toBe(2);
    expect(await cells.nth(0).textContent()).toContain(
      "checks record invalid: pass_ratio 1 is not 3/10 passed (0.3)",
    );
    expect(await cells.nth(0).textContent()).not.toContain("checks 3/10");
    expect(await cells.nth(1).textContent()).toContain(
      'checks record invalid: runs is "<img src=x>", not a whole number',
    );
    expect(await page.locator("#matrix-rows img").count()).toBe(0);
  });

  it("the picker shows one environment (its header, objects and details) or the matrix", async () => {
    const page = await browser.newPage();
    const base = await serve(TWO_ENVIRONMENTS);
    await page.goto(base);
    await expect.poll(() => page.locator("#matrix").isVisible()).toBe(true);
    expect(await page.locator("#list").isVisible()).toBe(false);
    const picker = page.getByLabel("Environment", { exact: true });
    expect(await picker.locator("option").allTextContents()).toEqual([
      "all environments (matrix)",
      "staging",
      "prod",
    ]);
    // One environment: its objects, its header; the choice is in the page's URL.
    await picker.selectOption("prod");
    await page.locator("#rows tr", { hasText: "support-agent" }).waitFor();
    expect(await page.locator("#matrix").isVisible()).toBe(false);
    expect(await page.locator("#rows").textContent()).not.toContain("-staging");
    expect(await page.locator("#facts").textContent()).toContain("Environmentprod");
    expect(new URL(page.url()).searchParams.get("env")).toBe("prod");
    expect(asked).toContain("/ui/api/header?env=prod");
    expect(asked.some((a) => a.startsWith("/ui/api/objects?") && a.includes("env=prod"))).toBe(true);
    // Reloaded, it shows the same environment; back, the matrix.
    await page.reload();
    await page.locator("#rows tr", { hasText: "billing" }).waitFor();
    expect(await picker.inputValue()).toBe("prod");
    await page.goBack();
    await expect.poll(() => page.locator("#matrix").isVisible()).toBe(true);
    // A matrix cell opens that deployment in its environment.
    await page.locator("#matrix-rows tr", { hasText: "support-agent" }).getByText("v1.4.2").click();
    await expect
      .poll(() => page.locator("#detail-title").textContent())
      .toBe("Deployment support-agent-staging");
    expect(asked).toContain("/ui/api/objects/Deployment/support-agent-staging?env=staging");
    expect(await picker.inputValue()).toBe("staging");
    // And the matrix again.
    await picker.selectOption("");
    await expect.poll(() => page.locator("#matrix").isVisible()).toBe(true);
    expect(await page.locator("#detail").isVisible()).toBe(false);
    expect(new URL(page.url()).searchParams.has("env")).toBe(false);
  });

  it("shows no matrix without environments (the route answers 404), or with one", async () => {
    const page = await browser.newPage();
    await page.goto(await serve(null));
    await page.locator("#rows tr").first().waitFor();
    expect(await page.locator("#matrix").isVisible()).toBe(false);
    expect(await page.locator("#environment-picker").isVisible()).toBe(false);
    await stop();
    await page.goto(await serve([TWO_ENVIRONMENTS[0]!]));
    await page.locator("#rows tr").first().waitFor();
    expect(await page.locator("#matrix").isVisible()).toBe(false);
  });

  it("shows the checks of the object's revision on its detail view", async () => {
    const page = await browser.newPage();
    await page.goto(`${await serve(TWO_ENVIRONMENTS)}#/object/Deployment/support-agent-staging`);
    await expect.poll(() => page.locator("#detail-checks").textContent()).toContain("4 of 4 runs (100%)");
    const facts = (await page.locator("#detail-checks").textContent()) ?? "";
    expect(facts).toContain("p50 80 ms, p95 120 ms, max 120 ms");
    expect(facts).toContain("rev-support-agent-staging");
    expect(facts).not.toContain("not the active revision");
  });
});
