import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createControlPlaneClient } from "../../src/api/control-plane-client.js";
import { ApiError } from "../../src/api/errors.js";
import { createSecretRedactor, REDACTED } from "../../src/api/secret-redactor.js";

// A hostile control plane decides where its echo is cut and where it puts it: a text body's excerpt
// (200 characters) was cut before it was redacted, so a secret placed to straddle the cut showed its
// first 7 characters (the redactor finds a cut form from 8); a 2xx answer that is not JSON is named
// by its Content-Type, which was printed unredacted.

const SECRET = "SeKrEt7-0123456789-abcdef";

let server: Server;
let base = "";
let answer: { status: number; body: string; type: string } = { status: 500, body: "", type: "text/plain" };
beforeAll(async () => {
  server = createServer((_req, res) => {
    res.writeHead(answer.status, { "content-type": answer.type });
    res.end(answer.body);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((done) => server.close(done)));

async function failure(): Promise<ApiError> {
  const client = createControlPlaneClient({
    apiUrl: base,
    apiKey: "key-0123456789",
    retry: { maxAttempts: 1 },
    redactor: createSecretRedactor([SECRET]),
  });
  const error = await client.getDeployment("d-1").then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe("a hostile server placing its echo", () => {
  it("redacts a text body before its excerpt is cut: no head of a secret straddling the cut", async () => {
    for (const shift of [1, 4, 7]) {
      answer = { status: 400, body: `${"x".repeat(200 - shift)}${SECRET} more`, type: "text/plain" };
      const error = await failure();
      const head = `x${SECRET.slice(0, shift)}`; // the excerpt's last characters
      expect(error.message).not.toContain(head);
      expect(JSON.stringify(error.detail)).not.toContain(head);
    }
  });

  it("redacts a Content-Type that holds a secret (a 2xx that is not JSON)", async () => {
    for (const type of [`text/html; charset=${SECRET}`, `text/${"x".repeat(93)}${SECRET}`]) {
      answer = { status: 200, body: "<html>login</html>", type };
      const error = await failure();
      expect(error.code).toBe("unexpected-response");
      expect(error.message).not.toContain(SECRET.slice(0, 7));
    }
    answer = { status: 200, body: "<html>login</html>", type: `text/html; charset=${SECRET}` };
    expect((await failure()).message).toContain(REDACTED);
  });
});
