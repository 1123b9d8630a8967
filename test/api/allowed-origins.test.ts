import { describe, expect, it } from "vitest";
import {
  allowedOriginsFrom,
  checkApiOrigin,
  originOf,
  parseAllowedOrigin,
} from "../../src/api/allowed-origins.js";
import { readApiOptions } from "../../src/api/config.js";

// The allowlist of API origins (docs/security.md "Pinning where the key goes"): entries and URLs
// compared by origin as the URL parser (and so fetch) reads them, refused before any key is read.

const thrown = (run: () => unknown): { code?: string; message: string; exitCode?: number } => {
  try {
    run();
  } catch (error) {
    return error as { code?: string; message: string; exitCode?: number };
  }
  throw new Error("expected it to throw");
};

describe("originOf", () => {
  it.each([
    ["HTTPS://API.Example.COM:443/", "https://api.example.com"],
    ["http://api.example.com:80/v2/deployments", "http://api.example.com"],
    ["http://api.example.com:8080", "http://api.example.com:8080"],
    ["http://[0:0:0:0:0:0:0:1]:8123/x", "http://[::1]:8123"],
    ["http://2130706433:8123", "http://127.0.0.1:8123"],
    ["http://0x7f.1:8123", "http://127.0.0.1:8123"],
    // The user name is not the host: fetch would go to attacker.example.
    ["https://api.example.com@attacker.example/", "https://attacker.example"],
    ["https://api.example.com:443@attacker.example:8443/", "https://attacker.example:8443"],
    ["https://bücher.example", "https://xn--bcher-kva.example"],
  ])("%s is %s", (url, origin) => {
    expect(originOf(url)).toBe(origin);
  });

  it("is undefined for what is not an http(s) URL", () => {
    expect(originOf("file:///var/run/secrets/token")).toBeUndefined();
    expect(originOf("api.example.com")).toBeUndefined();
    expect(originOf("")).toBeUndefined();
  });
});

describe("parseAllowedOrigin", () => {
  it.each([
    ["https://api.example.com", "https://api.example.com"],
    ["https://api.example.com/", "https://api.example.com"],
    [" HTTP://Host.Example:80 ", "http://host.example"],
    ["http://[::1]:8123", "http://[::1]:8123"],
  ])("takes %j as %s", (entry, origin) => {
    expect(parseAllowedOrigin(entry, "--allow-api-origin")).toBe(origin);
  });

  it.each([
    "https://api.example.com/v2",
    "ftp://api.example.com",
    "api.example.com",
    "https://user:pass@api.example.com",
    "https://api.example.com@attacker.example",
    "https://api.example.com/?x=1",
    "https://api.example.com?",
    "https://api.example.com#top",
    "*.example.com",
    "",
  ])("refuses %j as a usage error naming it", (entry) => {
    const error = thrown(() => parseAllowedOrigin(entry, "PLUMB_ALLOWED_API_ORIGINS"));
    expect(error).toMatchObject({ code: "usage", exitCode: 64 });
    expect(error.message).toContain(`PLUMB_ALLOWED_API_ORIGINS: ${JSON.stringify(entry.trim())} is not`);
  });
});

describe("allowedOriginsFrom", () => {
  it("is undefined when neither the flag nor the variable is set (nothing pinned)", () => {
    expect(allowedOriginsFrom({}, {})).toBeUndefined();
    expect(allowedOriginsFrom({ allowApiOrigin: [] }, { PLUMB_ALLOWED_API_ORIGINS: "  " })).toBeUndefined();
  });

  it("reads the variable's comma-separated list, spaces and empty pieces aside", () => {
    const allowed = allowedOriginsFrom(
      {},
      { PLUMB_ALLOWED_API_ORIGINS: " https://a.example , http://127.0.0.1:8123/,, " },
    );
    expect(allowed).toEqual({
      origins: new Set(["https://a.example", "http://127.0.0.1:8123"]),
      from: "PLUMB_ALLOWED_API_ORIGINS",
    });
  });

  it("takes the flags over the variable", () => {
    const allowed = allowedOriginsFrom(
      { allowApiOrigin: ["https://b.example"] },
      { PLUMB_ALLOWED_API_ORIGINS: "https://a.example" },
    );
    expect(allowed).toEqual({ origins: new Set(["https://b.example"]), from: "--allow-api-origin" });
  });

  it("refuses a variable naming no origin, and a bad entry, naming it", () => {
    expect(thrown(() => allowedOriginsFrom({}, { PLUMB_ALLOWED_API_ORIGINS: ", ," }))).toMatchObject({
      code: "usage",
    });
    const bad = thrown(() =>
      allowedOriginsFrom({}, { PLUMB_ALLOWED_API_ORIGINS: "https://a.example,https://b.example/api" }),
    );
    expect(bad.message).toContain('"https://b.example/api"');
  });
});

describe("checkApiOrigin", () => {
  const allowed = allowedOriginsFrom(
    { allowApiOrigin: ["https://api.example.com", "http://[::1]:8123"] },
    {},
  );

  it("lets a listed origin through, however the URL spells it", () => {
    for (const url of [
      "https://api.example.com",
      "https://API.example.com:443/v2",
      "https://api.example.com/",
      "http://[0::1]:8123/api",
    ])
      expect(() => checkApiOrigin(url, allowed, "PLUMB_API_URL")).not.toThrow();
  });

  it.each([
    ["https://api.example.com:8443", "https://api.example.com:8443"],
    ["http://api.example.com", "http://api.example.com"],
    ["https://api.example.com.attacker.example", "https://api.example.com.attacker.example"],
    // The same host for DNS, another for the URL parser: refused (fail closed), never widened.
    ["https://api.example.com./", "https://api.example.com."],
    ["https://api.example.com@attacker.example/x", "https://attacker.example"],
    ["http://[::1]:8124", "http://[::1]:8124"],
    ["not a url", "(not an http(s) URL)"],
  ])("refuses %s (api-origin-not-allowed), showing its origin only", (url, shown) => {
    const error = thrown(() => checkApiOrigin(url, allowed, "environment prod (prod.yaml:6): spec.api_url"));
    expect(error.code).toBe("api-origin-not-allowed");
    expect(error.message).toContain(`environment prod (prod.yaml:6): spec.api_url: ${shown} is not`);
    expect(error.message).toContain("--allow-api-origin: https://api.example.com, http://[::1]:8123");
    expect(error.message).not.toContain("/x");
  });

  it("checks nothing without a list", () => {
    expect(() => checkApiOrigin("https://anywhere.example", undefined, "PLUMB_API_URL")).not.toThrow();
  });
});

describe("readApiOptions with an allowlist", () => {
  const reads: string[] = [];
  const readFile = (path: string) => {
    reads.push(path);
    return "key-from-file-0123456789";
  };

  it("refuses PLUMB_API_URL's origin before the key file is read", () => {
    reads.length = 0;
    const env = {
      PLUMB_API_URL: "https://attacker.example",
      PLUMB_ALLOWED_API_ORIGINS: "https://api.example.com",
    };
    const error = thrown(() => readApiOptions(env, { apiKeyFile: "/var/run/secrets/token" }, readFile));
    expect(error.code).toBe("api-origin-not-allowed");
    expect(error.message).toContain("PLUMB_API_URL: https://attacker.example is not");
    expect(reads).toEqual([]);
  });

  it("refuses a platform URL of another origin, before the key", () => {
    reads.length = 0;
    const env = { PLUMB_API_URL: "https://api.example.com", PLUMB_PLATFORM_URL: "https://other.example" };
    const flags = { apiKeyFile: "/k", allowApiOrigin: ["https://api.example.com"] };
    expect(thrown(() => readApiOptions(env, flags, readFile))).toMatchObject({
      code: "api-origin-not-allowed",
    });
    expect(reads).toEqual([]);
  });

  it("reads a listed one as before and keeps the list for the transport", () => {
    const env = { PLUMB_API_URL: "https://api.example.com/", PLUMB_API_KEY: "k-0123456789" };
    const api = readApiOptions(env, { allowApiOrigin: ["https://API.example.com:443"] });
    expect(api.apiUrl).toBe("https://api.example.com");
    expect(api.allowedOrigins?.origins).toEqual(new Set(["https://api.example.com"]));
    expect(readApiOptions(env).allowedOrigins).toBeUndefined();
  });
});
