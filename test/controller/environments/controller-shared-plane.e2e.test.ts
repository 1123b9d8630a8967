import { describe, expect, it } from "vitest";
import { startController } from "../../../src/controller/controller.js";
import { memoryLogger, waitFor, writeDoc } from "../support.js";
import {
  environmentDoc,
  environmentOptions,
  imageOn,
  namesOn,
  PROD_KEY,
  revisionsOn,
  STAGING_KEY,
  useEnvironmentsHarness,
  writeAlpha,
  writeTree,
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

// The same collision made while the controller runs: prod's Environment edited in git to reach
// staging's control plane (its key read from another variable holding staging's key). The
// controller went on reconciling both, prod's alpha overwriting staging's. Now each read of the
// tree compares them as at start: both are refused (drained, nothing more sent), said in the log,
// /status and the status page, until git parts them again.
describe("a collision made in git while the controller runs", () => {
  it("refuses both environments, sends nothing to either, and takes them back once they part", async () => {
    await writeTree(h);
    const env = { ...process.env, STAGING_KEY, PROD_KEY, ALIAS_KEY: STAGING_KEY };
    const log = memoryLogger();
    const listen = { host: "127.0.0.1", port: 0 };
    const controller = await startController(environmentOptions(h, { logger: log.logger, listen }, env));
    h.controllers.push(controller);
    await waitFor("both settled", () => controller.ready(), 20_000);
    expect(await revisionsOn(h.staging, STAGING_KEY)).toEqual({ alpha: 1, beta: 1 });

    await writeDoc(h.dir, "env-prod.yaml", environmentDoc("prod", h.staging.url, "ALIAS_KEY"));
    await controller.rescan();
    const errors = () =>
      (controller.status().environments ?? []).map((e) => [e.environment, e.role, e.error ?? ""]);
    await waitFor(
      "both refused",
      () =>
        errors().every(
          ([, role, error]) => role === "failed" && error?.includes("environment-name-collision"),
        ),
      20_000,
    );
    // An edit of alpha is sent to neither: staging's alpha stays as it was, prod's is not created there.
    await writeAlpha(h, "img/alpha:prod-2", "img/alpha:2");
    await controller.rescan();
    expect(await revisionsOn(h.staging, STAGING_KEY)).toEqual({ alpha: 1, beta: 1 });
    expect(await imageOn(h.staging, STAGING_KEY, "alpha")).toBe("img/alpha:1");
    expect(await revisionsOn(h.prod, PROD_KEY)).toEqual({ alpha: 1 });
    expect(errors().map(([, , error]) => error)).toEqual([
      expect.stringContaining("environments prod and staging reach the same control plane here"),
      expect.stringContaining("environments prod and staging reach the same control plane here"),
    ]);
    expect(
      log
        .lines()
        .filter((l) => String(l.msg).startsWith("Environment refused"))
        .map((l) => l.environment),
    ).toEqual(expect.arrayContaining(["staging", "prod"]));
    const header = (await (await fetch(`${controller.url}/ui/api/header?env=prod`)).json()) as {
      invalid: Array<{ file: string; problems: Array<{ message: string }> }>;
    };
    expect(header.invalid.map((i) => [i.file, i.problems[0]?.message.slice(0, 36)]).sort()).toEqual([
      ["env-prod.yaml", "environment prod refused, nothing se"],
      ["env-staging.yaml", "environment staging refused, nothing"],
    ]);
    expect(log.text()).not.toContain(STAGING_KEY);

    // prod gets its own names there: both run again, staging's edit sent once, prod's alpha created.
    await writeDoc(
      h.dir,
      "env-prod.yaml",
      environmentDoc("prod", h.staging.url, "ALIAS_KEY", "  name_suffix: -prod\n"),
    );
    await controller.rescan();
    await waitFor(
      "both running again",
      async () => {
        const revisions = await revisionsOn(h.staging, STAGING_KEY);
        return revisions.alpha === 2 && revisions["alpha-prod"] === 1;
      },
      20_000,
    );
    await waitFor(
      "both settled again",
      () => controller.ready() && errors().every(([, role]) => role === "leader"),
      20_000,
    );
    expect(await revisionsOn(h.staging, STAGING_KEY)).toEqual({ alpha: 2, "alpha-prod": 1, beta: 1 });
    expect(await imageOn(h.staging, STAGING_KEY, "alpha-prod")).toBe("img/alpha:prod-2");
  }, 90_000);
});
