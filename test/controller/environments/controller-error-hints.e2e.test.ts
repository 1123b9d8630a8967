import { expect, it } from "vitest";
import { startController } from "../../../src/controller/controller.js";
import { freePort } from "../../support/free-port.js";
import { waitFor } from "../support.js";
import { environmentOptions, STAGING_KEY, useEnvironmentsHarness, writeTree } from "./fixture.js";

// The controller's records of an environment whose control plane refuses its key say which of that
// Environment's settings to check and where it is read from, never PLUMB_API_KEY (a controller of
// environments does not read it) and never the key. Two real control planes; /status over HTTP.

const h = useEnvironmentsHarness("plumb-ctl-env-hints-");
const WRONG_KEY = "wrong-prod-key-0123456789";

type Record = { environment?: string; name: string; last_error: string | null };

it("a key prod's control plane refuses: /status's last_error names prod's spec.api_key ($PROD_KEY)", async () => {
  await writeTree(h);
  const port = await freePort();
  const env = { ...process.env, STAGING_KEY, PROD_KEY: WRONG_KEY };
  const options = environmentOptions(h, { listen: { host: "127.0.0.1", port } }, env);
  const controller = await startController(options);
  h.controllers.push(controller);
  const status = async () =>
    ((await (await fetch(`http://127.0.0.1:${port}/status`)).json()) as { objects: Record[] }).objects;
  const prodError = async () => (await status()).find((o) => o.environment === "prod")?.last_error;
  const error = await waitFor("prod's refusal recorded", prodError, 20_000);

  expect(error).toContain("401");
  expect(error).toContain("check environment prod's spec.api_key ($PROD_KEY, env-prod.yaml:7)");
  expect(error).not.toContain("PLUMB_API_KEY");
  expect(error).not.toContain(WRONG_KEY);
  // staging, whose key is granted, converges meanwhile.
  await waitFor("staging settled", async () => (await status()).some((o) => o.environment === "staging"));
}, 60_000);
