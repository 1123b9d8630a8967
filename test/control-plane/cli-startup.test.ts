import { describe, expect, it } from "vitest";
import { controlPlaneCommand, formatStartup } from "../../src/cli/control-plane/control-plane.js";
import { DEFAULT_API_KEY, DEFAULT_TENANT_ID } from "../../src/control-plane/options.js";

// The start-up lines end up in terminals and CI logs: a key the user chose must not show at all,
// not even a prefix or suffix. Only the documented development key is printed in full.

const SECRET = "Zq9xK3vW7pL2mN8rT4yB6cH1jF5dG0sA"; // 32 characters, no repeated 3-grams
const TENANT = "11111111-0000-4000-8000-000000000001";

/** Every run of 3 characters of the secret that appears in `text`. */
const leaks = (text: string, secret = SECRET) =>
  [...Array(secret.length - 2).keys()].map((i) => secret.slice(i, i + 3)).filter((g) => text.includes(g));

describe("plumb control-plane start-up lines", () => {
  it("runs the real command: prints the URL, the development key in full and nothing of a chosen key", async () => {
    let out = "";
    let stop!: (signal: string) => void;
    const stopped = new Promise<string>((resolve) => (stop = resolve));
    const command = controlPlaneCommand({ write: (t: string) => (out += t) }, () => stopped);
    const env = process.env.PLUMB_LOG_LEVEL;
    process.env.PLUMB_LOG_LEVEL = "silent";
    const running = command.parseAsync(
      ["--port", "0", "--api-key", DEFAULT_API_KEY, "--api-key", `${SECRET}=${TENANT}`],
      { from: "user" },
    );
    try {
      await expect.poll(() => out, { interval: 5 }).toContain("state:");
      const lines = out.trimEnd().split("\n");
      expect(lines[0]).toMatch(/^plumb control plane listening on http:\/\/127\.0\.0\.1:\d+$/);
      expect(lines[1]).toBe(`  accepts API key ${DEFAULT_API_KEY} for tenant(s) ${DEFAULT_TENANT_ID}`);
      expect(lines[2]).toBe(
        `  accepts API key (key from --api-key #2, 32 characters) for tenant(s) ${TENANT}`,
      );
      expect(leaks(out)).toEqual([]);
      // The banner tells the truth: the chosen key is accepted for its tenant.
      const url = /listening on (\S+)/.exec(out)?.[1] ?? "";
      const answer = await fetch(`${url}/v2/deployments`, { headers: { "x-api-key": SECRET } });
      expect(answer.status).toBe(200);
    } finally {
      stop("SIGTERM");
      await running;
      if (env === undefined) delete process.env.PLUMB_LOG_LEVEL;
      else process.env.PLUMB_LOG_LEVEL = env;
    }
  });

  it("shows active --faults on the banner, and nothing about faults without them", () => {
    const grants = [{ key: DEFAULT_API_KEY, tenants: [DEFAULT_TENANT_ID] }];
    const faulty = formatStartup("http://127.0.0.1:8123", grants, "in memory", "500=0.05,reset=0.02");
    expect(faulty.at(-1)).toBe("  faults injected: 500=0.05,reset=0.02 (requests fail on purpose)");
    expect(formatStartup("http://127.0.0.1:8123", grants, "in memory").join("\n")).not.toContain("fault");
  });

  it("formatStartup never reveals a character run of a short or long chosen key", () => {
    for (const key of [SECRET, "abc", "k3y!", `${SECRET}${SECRET.toLowerCase()}`]) {
      const text = formatStartup(
        "http://127.0.0.1:8123",
        [{ key, tenants: [DEFAULT_TENANT_ID] }],
        "in memory",
      ).join("\n");
      expect(leaks(text, key), key).toEqual([]);
      expect(text).toContain(`(key from --api-key #1, ${key.length} characters)`);
    }
  });
});
