import { describe, expect, it } from "vitest";
import { ApiConfigError, readApiOptions, readKeyFileAgain, redactKey } from "../../src/api/config.js";

const KEY = "lsv2_pt_0123456789abcdefghij";
const files: Record<string, string> = {
  "/keys/ok": `${KEY}\n`,
  "/keys/empty": "  \n",
  "/keys/two-lines": `${KEY}\r\nsecond-line\n`,
};
const readFile = (path: string) => {
  const text = files[path];
  if (text === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: "ENOENT" });
  return text;
};
const read = (env: Record<string, string>, flags = {}) => readApiOptions(env, flags, readFile);
const failure = (fn: () => unknown): ApiConfigError => {
  try {
    fn();
  } catch (error) {
    if (error instanceof ApiConfigError) return error;
    throw error;
  }
  throw new Error("expected ApiConfigError");
};

describe("readApiOptions", () => {
  it("reads the environment; the platform URL defaults to the API URL", () => {
    expect(read({ PLUMB_API_URL: "http://127.0.0.1:8123/", PLUMB_API_KEY: KEY })).toEqual({
      apiUrl: "http://127.0.0.1:8123",
      apiKey: KEY,
      platformUrl: "http://127.0.0.1:8123",
    });
  });

  it("lets flags override the environment, key file included", () => {
    const options = read(
      {
        PLUMB_API_URL: "http://env.test",
        PLUMB_API_KEY: "env-key",
        PLUMB_TENANT_ID: "env-tenant",
        PLUMB_PLATFORM_URL: "http://platform-env.test",
      },
      {
        apiUrl: "https://flag.test/api",
        apiKeyFile: "/keys/ok",
        tenantId: "flag-tenant",
        platformUrl: "https://p.test",
      },
    );
    expect(options).toEqual({
      apiUrl: "https://flag.test/api",
      apiKey: KEY,
      // Kept: a 401 reads it again (a rotated key, transport/http.ts).
      apiKeyFile: "/keys/ok",
      tenantId: "flag-tenant",
      platformUrl: "https://p.test",
    });
  });

  it("names what to set when the key or URL is missing", () => {
    expect(failure(() => read({ PLUMB_API_URL: "http://x.test" })).message).toBe(
      "no API key: set PLUMB_API_KEY or pass --api-key-file PATH",
    );
    expect(failure(() => read({ PLUMB_API_KEY: KEY })).message).toContain("PLUMB_API_URL");
    expect(failure(() => read({ PLUMB_API_URL: "http://x.test", PLUMB_API_KEY: "   " })).code).toBe(
      "api-config",
    );
  });

  it("reports unreadable or empty key files without their content", () => {
    const env = { PLUMB_API_URL: "http://x.test" };
    expect(failure(() => read(env, { apiKeyFile: "/keys/missing" })).message).toBe(
      "cannot read --api-key-file /keys/missing (ENOENT)",
    );
    expect(failure(() => read(env, { apiKeyFile: "/keys/empty" })).message).toContain("is empty");
  });

  it("refuses a key no HTTP header can carry (fetch failed it as a network error blaming the URL), never showing it", () => {
    const env = { PLUMB_API_URL: "http://x.test" };
    const fromFile = failure(() => read(env, { apiKeyFile: "/keys/two-lines" }));
    expect(fromFile.message).toContain("--api-key-file /keys/two-lines holds a line break");
    for (const key of [`${KEY}\nmore`, `${KEY}\u0000`, `${KEY}\u20ac`]) {
      const error = failure(() => read({ ...env, PLUMB_API_KEY: key }));
      expect(error.code).toBe("api-config");
      expect(error.message).toContain("PLUMB_API_KEY holds");
      expect(error.message).not.toContain(KEY);
    }
    expect(fromFile.message).not.toContain(KEY);
    // A rotated file holding such a key is not taken: the key in use stays.
    expect(readKeyFileAgain("/keys/two-lines", readFile)).toBeUndefined();
    expect(readKeyFileAgain("/keys/ok", readFile)).toBe(KEY);
  });

  it("refuses bad URLs, and URLs carrying credentials", () => {
    expect(failure(() => read({ PLUMB_API_URL: "not a url", PLUMB_API_KEY: KEY })).message).toContain(
      "not a URL",
    );
    expect(failure(() => read({ PLUMB_API_URL: "ftp://x.test", PLUMB_API_KEY: KEY })).message).toContain(
      "http",
    );
    const withKey = failure(() => read({ PLUMB_API_URL: `https://user:${KEY}@x.test`, PLUMB_API_KEY: KEY }));
    expect(withKey.message).not.toContain(KEY);
    for (const url of [`https://x.test/?code=${KEY}`, `https://x.test/api#${KEY}`]) {
      const withQuery = failure(() => read({ PLUMB_API_URL: url, PLUMB_API_KEY: KEY }));
      expect(withQuery.message).toContain("PLUMB_API_URL must not carry a query");
      expect(withQuery.message).not.toContain(KEY);
    }
    expect(
      failure(() =>
        read({ PLUMB_API_URL: "https://x.test", PLUMB_API_KEY: KEY }, { platformUrl: "https://p.test/?a=1" }),
      ).message,
    ).toContain("--platform-url must not carry a query");
  });
});

describe("redactKey", () => {
  it("never shows enough of a key to use it", () => {
    expect(redactKey(KEY)).toBe("****ghij");
    expect(redactKey("short-key")).toBe("****");
  });
});
