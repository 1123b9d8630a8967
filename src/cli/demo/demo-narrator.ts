import { resolve } from "node:path";
import { createColors } from "picocolors";
import type { Controller } from "../../controller/controller.js";
import { DEFAULT_API_KEY } from "../../control-plane/options.js";
import type { DemoIo } from "./demo-io.js";
import { fetchMatrix, formatMatrix, waitSettled } from "./demo-matrix.js";
import type { DemoPlanes } from "./demo-planes.js";

// What the demo says: its voice (lines, numbered steps, label/value rows), the control planes and
// the manifests it starts with, and where to look once the controller watches.

/** How the demo speaks: lines, numbered steps, and label/value rows in one column. */
export type Narrator = ReturnType<typeof narrator>;

export function narrator(io: DemoIo, color: boolean) {
  const c = createColors(color);
  const say = (text = "") => io.stdout.write(`${text}\n`);
  const step = (text: string) => say(`\n${c.bold(c.cyan(`==> ${text}`))}`);
  // One column for every label: the longest ("Status page") and two spaces.
  const row = (label: string, value: string, note = "") =>
    say(`  ${label.padEnd(13)}${value}${note ? `  ${c.dim(note)}` : ""}`);
  return { c, say, step, row };
}

export function introducePlanes(
  { say, step, row }: Narrator,
  planes: DemoPlanes,
  revisionSeconds: number,
): void {
  step("1. Two local control planes, standing in for the hosted service and our own cluster");
  row("Hosted", planes.hosted.url, "SaaS mode: staging and prod (staging's names end in -staging)");
  row("Self-hosted", planes.selfHosted.url, "self-hosted mode: onprem");
  // plumb-local-key is the local servers' documented development key, not a credential.
  row("API key", DEFAULT_API_KEY, "both servers' built-in development key");
  row("Try", `curl -s -H 'X-Api-Key: ${DEFAULT_API_KEY}' ${planes.hosted.url}/v2/deployments`);
  say(`  In memory: everything is gone when the demo stops. Each revision moves one state every`);
  say(`  ${revisionSeconds}s until DEPLOYED, like a real build.`);
}

export function introduceManifests({ say, step, row }: Narrator, dir: string): void {
  step("2. The manifests: a copy of examples/ you can edit freely");
  row("Dir", dir);
  row("Environments", "environments/staging.yaml, prod.yaml, onprem.yaml", "where each control plane is");
  say("  One file per agent. saas/support-agent.yaml says once what the agent is and, under");
  say("  `environments:`, only what differs: staging runs the release candidate refs/tags/v1.5.0,");
  say("  prod the release staging verified before. Secrets read from the environment get a fake");
  say(`  demo value; billing-agent's custom_url (an address in our cluster) is left out of the copy.`);
  say(`  \`plumb render ${dir} --env prod\` prints what prod gets.`);
}

/** Where to look while the controller watches, the matrix once settled, and what to try. */
export async function showWatching(
  { c, say, row }: Narrator,
  dir: string,
  controller: Controller,
): Promise<void> {
  say();
  row("Watching", dir, "a save is reconciled about 200 ms later");
  row("Status page", `${controller.url}/`, "open in a browser: deployment × environment, live");
  row("Status", `${controller.url}/status`, "JSON: every object's sync, health, revision");
  row("Metrics", `${controller.url}/metrics`, "Prometheus");
  row("Drift", "checked every minute; changes made behind plumb's back are put back");
  say();
  if (controller.url && (await waitSettled(() => controller.status(), 3, 60_000))) {
    say(c.bold("Deployment × environment, as the status page shows it (each agent's version there):"));
    say(formatMatrix(await fetchMatrix(controller.url)));
    say();
  }
  say(c.bold("Try it:"));
  say(`  1. In ${resolve(dir, "saas", "support-agent.yaml")}`);
  say("     change LOG_LEVEL's value info to warning and save: prod's support-agent gets a new");
  say("     revision; staging's keeps its override's debug, so nothing is sent there.");
  say(`  2. In ${resolve(dir, "saas", "docs-agent", "src", "agent.ts")}`);
  say("     change anything and save: plumb packs and uploads the new source, one new revision");
  say("     in staging and one in prod.");
  say("  3. Break a manifest (e.g. misspell `spec`): it is reported with file:line and left alone");
  say("     while the others keep reconciling; fix it and it is reconciled again.");
  say(c.dim("  Press Ctrl-C to stop; the control planes, controller and temporary copy are removed."));
  say();
}
