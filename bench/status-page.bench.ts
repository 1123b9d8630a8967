import { existsSync } from "node:fs";
import { Registry } from "prom-client";
import { chromium } from "playwright-core";
import { startControllerHttp } from "../src/controller/http-server.js";
import { buildObjectPage, buildObjectRow, type PageObject } from "../src/status-page/page-model.js";
import type { ObjectStatus } from "../src/status/status-types.js";
import { baselineRatio } from "./baseline.js";

// Issue 14: the status page is usable at 10,000 objects — under 1 MB transferred and rendered in
// under 1 s (navigation to the first page of rows on screen), in Debian's Chromium. Median of 5
// loads in a fresh page each; the controller's side is the real HTTP server and page model.

const COUNT = 10_000;
const TARGET_MS = 1_000;
const TARGET_BYTES = 1_000_000;
const CHROMIUM = process.env.PLUMB_CHROMIUM ?? "/usr/bin/chromium";

const status = (name: string, i: number): ObjectStatus => ({
  kind: "Deployment",
  name,
  id: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
  latest_revision_id: `10000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
  active_revision_id: `10000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
  revision_status: "DEPLOYED",
  sync: i % 10 === 0 ? "OutOfSync" : "Synced",
  health: "Healthy",
  git_commit: "0123456789abcdef0123456789abcdef01234567",
  manifest_digest: null,
  secret_fingerprints: null,
  updated_at: new Date().toISOString(),
  last_error: null,
});

export async function run(): Promise<string[]> {
  if (!existsSync(CHROMIUM)) return [`skipped: no Chromium at ${CHROMIUM} (apt-get install chromium)`];
  const objects: PageObject[] = Array.from({ length: COUNT }, (_, i) => {
    const name = `agent-${String(i).padStart(5, "0")}`;
    return {
      kind: "Deployment",
      name,
      status: status(name, i),
      manifest: { file: `teams/team-${i % 40}/${name}.yaml`, line: 2 },
      activity: undefined,
    };
  });
  const http = await startControllerHttp(
    { host: "127.0.0.1", port: 0 },
    {
      ready: () => true,
      registry: new Registry(),
      status: () => ({}),
      webhookSecret: undefined,
      onWebhook: () => undefined,
      page: {
        header: () => ({
          ready: true,
          role: "leader",
          source: { kind: "dir", location: "/manifests", commit: null },
          control_plane: "http://cp.example",
          api: "up",
          rate_limit: { used: 0, limit: 1000, window_seconds: 10 },
          next_drift_check: null,
          queue: { pending: 0, running: 0, backingOff: 0 },
          invalid: [],
          now: new Date().toISOString(),
        }),
        objects: (query) => buildObjectPage(objects, query),
        detail: async () => ({
          object: buildObjectRow(objects[0]!),
          revisions: [],
          revisions_error: null,
          last_plan: [],
        }),
        subscribe: () => () => undefined,
      },
    },
  );
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
  });
  try {
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < 5; i++) {
      const page = await browser.newPage();
      let loaded = 0;
      page.on("response", (response) => {
        if (!response.url().endsWith("/ui/events"))
          void response.body().then(
            (body) => (loaded += body.length),
            () => undefined,
          );
      });
      const started = performance.now();
      await page.goto(http.url);
      await page.locator("#rows tr").nth(49).waitFor();
      times.push(performance.now() - started);
      await page.waitForTimeout(100); // let the last response bodies be counted
      bytes = Math.max(bytes, loaded);
      await page.close();
    }
    const median = times.sort((a, b) => a - b)[2]!;
    return [
      `status page, ${COUNT.toLocaleString("en")} objects: first 50 rows on screen in ${median.toFixed(0)} ms (median of 5; target < ${TARGET_MS} ms): ${median < TARGET_MS ? "OK" : "MISSED"}; ${await baselineRatio(median)}`,
      `transferred: ${(bytes / 1024).toFixed(0)} KB (target < ${TARGET_BYTES / 1_000_000} MB): ${bytes < TARGET_BYTES ? "OK" : "MISSED"}`,
    ];
  } finally {
    await browser.close();
    await http.close();
  }
}
