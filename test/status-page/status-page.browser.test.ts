import { existsSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Controller, startController } from "../../src/controller/controller.js";
import { serveSyntheticPage, syntheticObjects } from "../../bench/status-page-fixtures.js";
import { status } from "../controller/fixtures.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { api, container, memoryLogger, waitFor, writeDoc } from "../controller/support.js";

// The controller's status page in a real browser: Debian's Chromium (package `chromium`, which
// .ci/run installs) driven by playwright-core. Off CI, a machine without it skips these tests;
// in CI a missing browser fails them. PLUMB_UPDATE_SCREENSHOTS=1 refreshes docs/images/.

const CHROMIUM = process.env.PLUMB_CHROMIUM ?? "/usr/bin/chromium";
const haveBrowser = existsSync(CHROMIUM) || Boolean(process.env.CI);
const TOKEN = "page-token-9f3e1c";
const SECRET_VALUE = "t0ps3cret-value";

let browser: Browser;
let dir: string;
let shots: string;
let cp: RunningControlPlane;
let controller: Controller | undefined;

beforeAll(async () => {
  if (!haveBrowser) return;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"].concat([
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ]),
  });
});
afterAll(async () => {
  await browser?.close();
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-page-"));
  shots = await mkdtemp(join(tmpdir(), "plumb-shots-"));
  cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0 });
});
afterEach(async () => {
  await controller?.stop(1_000);
  controller = undefined;
  await cp.stop();
  await rm(dir, { recursive: true, force: true });
  await rm(shots, { recursive: true, force: true });
});

async function startWithObjects(): Promise<Controller> {
  await mkdir(join(dir, "agents"));
  await writeDoc(dir, "agents/alpha.yaml", container("alpha", "img/alpha:1"));
  await writeDoc(
    dir,
    "agents/beta.yaml",
    container("beta", "img/beta:1", { secrets: [{ name: "TOKEN", valueFrom: { env: "TOKEN_FROM_ENV" } }] }),
  );
  await writeDoc(dir, "agents/gamma.yaml", container("gamma", "img/gamma:1"));
  controller = await startController({
    source: { kind: "dir", dir },
    api: { apiUrl: cp.url, apiKey: DEFAULT_API_KEY, platformUrl: cp.url },
    listen: { host: "127.0.0.1", port: 0 },
    statusToken: TOKEN,
    driftSchedule: "0 * * * *",
    selfHeal: false,
    concurrency: 4,
    debounceMs: 30,
    backoffBaseMs: 50,
    backoffMaxMs: 200,
    timeoutMs: 10_000,
    pollIntervalMs: 10,
    maxPollIntervalMs: 50,
    env: { ...process.env, TOKEN_FROM_ENV: SECRET_VALUE },
    logger: memoryLogger().logger,
  });
  const started = controller;
  await waitFor("first reconcile", () => started.ready());
  return started;
}

const rowOf = (page: Page, name: string) => page.locator("#rows tr", { hasText: name });

async function logIn(page: Page, url: string) {
  await page.goto(url);
  await page.getByLabel("Token").fill(TOKEN);
  await page.getByRole("button", { name: "Show status" }).click();
  await page.locator("#rows tr").first().waitFor();
}

async function screenshot(page: Page, name: string) {
  const file = join(shots, name);
  await page.screenshot({ path: file, fullPage: true });
  expect(existsSync(file)).toBe(true);
  if (process.env.PLUMB_UPDATE_SCREENSHOTS) await copyFile(file, join("docs", "images", name));
}

describe.skipIf(!haveBrowser)("status page in Chromium", () => {
  it("asks for the token, then lists every object with sync, health, revision and manifest", async () => {
    const started = await startWithObjects();
    const page = await browser.newPage();
    await page.goto(started.url!);
    await expect.poll(() => page.locator("#login").isVisible()).toBe(true);
    await page.getByLabel("Token").fill("wrong-token");
    await page.getByRole("button", { name: "Show status" }).click();
    await expect.poll(() => page.locator("#login-error").textContent()).toContain("not accepted");

    await logIn(page, started.url!);
    await expect.poll(() => page.locator("#rows tr").count()).toBe(3);
    const alpha = await api(cp.url).deployment("alpha");
    const row = rowOf(page, "alpha");
    await expect.poll(() => row.textContent()).toContain("Synced");
    const text = (await row.textContent()) ?? "";
    expect(text).toContain("Healthy");
    expect(text).toContain(alpha.id);
    expect(text).toContain(alpha.latest_revision_id!.slice(0, 8));
    expect(text).toContain("agents/alpha.yaml:2");
    expect(text).toMatch(/change · applied · \d+ ms/);
    const header = (await page.locator("#facts").textContent()) ?? "";
    expect(header).toContain(`directory ${started.manifestRoot}`);
    expect(header).toContain(cp.url);
    expect(header).toContain("leader");
    expect(header).toContain("reachable");
    expect(header).toMatch(/\d+ of 1000 requests per 10 s/);
    expect(header).toMatch(/Next drift check\d{4}-\d\d-\d\dT\d\d:00:00/);
    // Nothing secret reaches the page: not the value, not the token in the markup.
    const html = await page.content();
    expect(html).not.toContain(SECRET_VALUE);
    expect(html).not.toContain(TOKEN);
    await screenshot(page, "status-page.png");
  });

  it("filters by sync and health, searches, and pages", async () => {
    const started = await startWithObjects();
    const page = await browser.newPage();
    await logIn(page, started.url!);
    await page.getByLabel("Search").fill("bet");
    await expect.poll(() => page.locator("#rows tr").count()).toBe(1);
    expect(await page.locator("#rows").textContent()).toContain("beta");
    await page.getByLabel("Search").fill("");
    await expect.poll(() => page.locator("#rows tr").count()).toBe(3);
    await page.getByLabel("Sync").selectOption("OutOfSync");
    await expect.poll(() => page.locator("#rows tr").count()).toBe(0);
    expect(await page.locator("#count").textContent()).toContain("0 shown (3 objects)");
    await page.getByLabel("Sync").selectOption("Synced");
    await page.getByLabel("Health").selectOption("Healthy");
    await expect.poll(() => page.locator("#rows tr").count()).toBe(3);
    expect(await page.getByLabel("Sync").textContent()).toContain("Synced (3)");
  });

  it("updates without a reload after a manifest edit, and shows one object's revisions and last plan", async () => {
    const started = await startWithObjects();
    const page = await browser.newPage();
    await logIn(page, started.url!);
    await expect.poll(() => page.locator("#live").textContent()).toBe("live");
    const before = await api(cp.url).deployment("alpha");
    await writeDoc(dir, "agents/alpha.yaml", container("alpha", "img/alpha:2"));
    const after = await waitFor("alpha's new revision", async () => {
      const d = await api(cp.url).deployment("alpha");
      return d.latest_revision_id !== before.latest_revision_id ? d : null;
    });
    // The same page (no navigation) shows the new revision once it is recorded.
    await expect
      .poll(() => rowOf(page, "alpha").textContent(), { timeout: 10_000 })
      .toContain(after.latest_revision_id!.slice(0, 8));

    await page.getByRole("link", { name: "alpha" }).click();
    await expect.poll(() => page.locator("#detail-title").textContent()).toBe("Deployment alpha");
    await expect.poll(() => page.locator("#detail-revisions tr").count()).toBe(2);
    // The last plan is the one of the last reconcile that finished: under load the page can show
    // the new revision before that reconcile (waiting for DEPLOYED) has finished.
    await expect
      .poll(() => page.locator("#detail-plan").textContent(), { timeout: 10_000 })
      .toContain('source_revision_config.image_uri: "img/alpha:1" → "img/alpha:2"');
    expect(await page.locator("#detail-revisions").textContent()).toContain(after.latest_revision_id);
    await screenshot(page, "status-page-detail.png");
    await page.getByRole("link", { name: "← all objects" }).click();
    await expect.poll(() => page.locator("#list").isVisible()).toBe(true);
  });

  it("stays under 1 MB transferred with 10,000 objects, and pages through them", async () => {
    const objects = syntheticObjects(10_000, (name, i) =>
      status(name, { last_error: i % 7 === 0 ? "revision FAILED: image pull backoff" : null }),
    );
    const http = await serveSyntheticPage(objects);
    try {
      const page = await browser.newPage();
      let bytes = 0;
      page.on("response", (response) => {
        if (!response.url().endsWith("/ui/events"))
          void response.body().then(
            (body) => (bytes += body.length),
            () => undefined,
          );
      });
      await page.goto(http.url);
      await page.locator("#rows tr").first().waitFor();
      expect(await page.locator("#rows tr").count()).toBe(50);
      expect(await page.locator("#count").textContent()).toBe("1–50 of 10000 shown (10000 objects)");
      await page.getByRole("button", { name: "Next" }).click();
      await expect.poll(() => page.locator("#rows tr").first().textContent()).toContain("agent-00050");
      await page.getByLabel("Search").fill("team-39/");
      await expect.poll(() => page.locator("#count").textContent()).toBe("1–50 of 250 shown (10000 objects)");
      await expect.poll(() => bytes).toBeGreaterThan(10_000);
      expect(bytes).toBeLessThan(1_000_000);
    } finally {
      await http.close();
    }
  });
});
