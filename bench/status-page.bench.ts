import { existsSync } from "node:fs";
import { chromium } from "playwright-core";
import type { ObjectStatus } from "../src/status/status-types.js";
import { baselineRatio } from "./baseline.js";
import { serveSyntheticPage, syntheticObjects } from "./status-page-fixtures.js";

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
  const objects = syntheticObjects(COUNT, status);
  const http = await serveSyntheticPage(objects);
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
