import { describe, expect, it } from "vitest";
import { startController } from "../../../src/controller/controller.js";
import { writeDoc } from "../support.js";
import {
  environmentDoc,
  environmentOptions,
  namesOn,
  STAGING_KEY,
  useEnvironmentsHarness,
  writeAlpha,
} from "./fixture.js";

// A controller of two environments whose settings are written differently (a literal URL and
// {env: PROD_URL}, two key variables) but resolve to one control plane, both running alpha without
// a name_suffix: it reconciled one live deployment from both environments, each undoing the
// other's image for ever. It now refuses to start (environment-name-collision), as plan and apply
// refuse, and sends nothing. Real control planes; staging's deployments counted.

const h = useEnvironmentsHarness("plumb-ctl-shared-plane-");

describe("a controller of two environments on one control plane as resolved", () => {
  it("does not start, naming both environments, and creates nothing", async () => {
    await writeDoc(h.dir, "env-staging.yaml", environmentDoc("staging", h.staging.url, "STAGING_KEY"));
    await writeDoc(h.dir, "env-prod.yaml", environmentDoc("prod", "{env: PROD_URL}", "PROD_KEY"));
    await writeAlpha(h, "img/alpha:prod-1");
    const env = { ...process.env, STAGING_KEY, PROD_KEY: STAGING_KEY, PROD_URL: h.staging.url };
    const started = startController(environmentOptions(h, {}, env));
    await expect(started).rejects.toMatchObject({
      code: "environment-name-collision",
      message: expect.stringContaining(
        "environments prod and staging reach the same control plane here",
      ) as string,
    });
    await expect(started).rejects.not.toThrow(STAGING_KEY);
    expect(await namesOn(h.staging, STAGING_KEY)).toEqual([]);
  });

  it("starts when prod's URL resolves to its own control plane", async () => {
    await writeDoc(h.dir, "env-staging.yaml", environmentDoc("staging", h.staging.url, "STAGING_KEY"));
    await writeDoc(h.dir, "env-prod.yaml", environmentDoc("prod", "{env: PROD_URL}", "PROD_KEY"));
    await writeAlpha(h, "img/alpha:prod-1");
    const env = {
      ...process.env,
      STAGING_KEY,
      PROD_KEY: "prod-key-0123456789abcdef0123",
      PROD_URL: h.prod.url,
    };
    const controller = await startController(environmentOptions(h, {}, env));
    h.controllers.push(controller);
    expect(controller.manifestRoot).toBe(h.dir);
  });
});
