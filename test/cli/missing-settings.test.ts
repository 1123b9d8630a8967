import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { copyFlatExample } from "../support/flat-example.js";
import { runInProcess } from "../support/in-process-cli.js";

// Without PLUMB_API_URL / PLUMB_API_KEY, every command that reads live state says so once and
// exits 1. The SaaS example includes an OrganizationAccess, so plan reads two things at once: a
// settings error must not leave one of those reads rejected with nobody awaiting it.

let root: string;
const rejections: unknown[] = [];
const onRejection = (reason: unknown) => void rejections.push(reason);

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-no-settings-"));
  await copyFlatExample("saas", root);
  rejections.length = 0;
  process.on("unhandledRejection", onRejection);
});

afterEach(async () => {
  process.off("unhandledRejection", onRejection);
  await rm(root, { recursive: true, force: true });
});

/** Lets Node report unhandled rejections (it does so after the microtask queue drains). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe("missing API settings", () => {
  it.each([["plan"], ["apply", "--yes"], ["drift"], ["status"]])(
    "%s: one clean error line, exit 1, no stack trace, no unhandled rejection",
    async (command, ...extra) => {
      const { code, output } = await runInProcess([command, root, ...extra], {
        PLUMB_API_URL: "",
        PLUMB_API_KEY: "",
        OPENAI_API_KEY: "sk-test-not-a-real-key",
      });
      await settle();
      expect(code).toBe(1);
      expect(rejections).toEqual([]);
      expect(output).toBe("plumb: no API URL: set PLUMB_API_URL or pass --api-url [api-config]\n");
    },
  );
});
