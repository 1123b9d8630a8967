import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nock from "nock";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApiError } from "../../../src/api/errors.js";
import { createHttpClient } from "../../../src/api/transport/http.js";
import { BASE, fakeClock, useStrictNock } from "../helpers.js";

// A key read from a file (--api-key-file, an Environment's api_key: {file}) is read again when the
// server answers 401: a key rotated in place (a mounted Secret) is used from then on, without a
// restart. Nothing else changes: no file, the same key, or an unreadable file, and the 401 stands.

useStrictNock();

const OLD = "old-key-0000000000000000";
const NEW = "new-key-1111111111111111";
let dir: string;
let file: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-key-rotation-"));
  file = join(dir, "api-key");
  await writeFile(file, `${OLD}\n`);
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

const client = (apiKeyFile: string | undefined) =>
  createHttpClient({
    baseUrl: BASE,
    auth: { scheme: "api-key", apiKey: OLD },
    clock: fakeClock(),
    random: () => 0.5,
    ...(apiKeyFile ? { apiKeyFile } : {}),
  });

const unauthorized = { detail: "Invalid token" };

describe("a key rotated in its file", () => {
  it("a 401 reads the file again and sends the request once more with the new key, a POST too", async () => {
    const http = client(file);
    await writeFile(file, `${NEW}\n`); // rotated after the client read it
    nock(BASE, { reqheaders: { "x-api-key": OLD } })
      .post("/v2/deployments")
      .reply(401, unauthorized);
    nock(BASE, { reqheaders: { "x-api-key": NEW } })
      .post("/v2/deployments")
      .reply(201, { id: "d1" });
    expect(await http.request({ method: "POST", path: "/v2/deployments", body: { name: "a" } })).toEqual({
      id: "d1",
    });
    // From then on the new key only: no 401 first.
    nock(BASE, { reqheaders: { "x-api-key": NEW } })
      .get("/v2/deployments")
      .reply(200, { resources: [] });
    expect(await http.request({ method: "GET", path: "/v2/deployments" })).toEqual({ resources: [] });
  });

  it("the same key in the file, no file, or an unreadable one: the 401 is the answer, sent once", async () => {
    for (const apiKeyFile of [file, undefined, join(dir, "missing")]) {
      nock(BASE, { reqheaders: { "x-api-key": OLD } })
        .post("/v2/deployments")
        .reply(401, unauthorized);
      const error = await client(apiKeyFile)
        .request({ method: "POST", path: "/v2/deployments", body: {} })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(401);
    }
  });

  it("a new key that is refused too is not tried again and again: one more request, then the 401", async () => {
    const http = client(file);
    await writeFile(file, NEW);
    nock(BASE).get("/v2/deployments").times(2).reply(401, unauthorized);
    const error = await http.request({ method: "GET", path: "/v2/deployments" }).catch((e: unknown) => e);
    expect((error as ApiError).status).toBe(401);
    expect(nock.isDone()).toBe(true);
  });

  it("the new key never shows in an error the server echoes", async () => {
    const http = client(file);
    await writeFile(file, NEW);
    nock(BASE).get("/v2/x").reply(401, unauthorized);
    nock(BASE)
      .get("/v2/x")
      .reply(400, { detail: `bad key ${NEW}` });
    const error = await http.request({ method: "GET", path: "/v2/x" }).catch((e: unknown) => e);
    expect(String((error as ApiError).message)).not.toContain(NEW);
  });
});
