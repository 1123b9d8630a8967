import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createControlPlaneClient } from "../../src/api/control-plane-client.js";
import { ApiError } from "../../src/api/errors.js";
import { createSecretRedactor, REDACTED } from "../../src/api/secret-redactor.js";

// A hostile (or merely foreign) server echoes a secret it was sent in its own spelling: Go's JSON
// writes `<` `>` `&` as `\u003c`; Java's escapes in upper-case hex; PHP writes `/` as `\/`; Python's
// html.escape writes `'` as `&#x27;`; a server strips the value's blanks or normalizes its Unicode
// (NFC) or upper-cases it. Each was printed whole (or its tail after the first escape) before the
// redactor searched the text as these escapes decode it (docs/security.md, "Redaction").

const hex = (c: string, upper = false) => {
  const h = c.charCodeAt(0).toString(16).padStart(4, "0");
  return `\\u${upper ? h.toUpperCase() : h}`;
};
const goJson = (value: string) => JSON.stringify(value).replace(/[<>&]/g, (c) => hex(c));

type Case = { name: string; secret: string; echo: string; gone: string[] };
const CASES: Case[] = [
  {
    name: "Go's JSON (\\u003c, \\u0026)",
    secret: "pa<ss&word>Zq8-tail",
    echo: goJson("pa<ss&word>Zq8-tail"),
    gone: ["Zq8", "tail"],
  },
  {
    name: "upper-case \\u hex (Java)",
    secret: "pässwörd-Zq8-tail",
    echo: JSON.stringify("pässwörd-Zq8-tail").replace(/[^\0-\x7f]/g, (c) => hex(c, true)),
    gone: ["Zq8", "tail"],
  },
  {
    name: "every character as \\uXXXX",
    secret: "secretvalue-Zq8",
    echo: [..."secretvalue-Zq8"].map((c) => hex(c)).join(""),
    gone: ["\\u0005a\\u0071\\u0038"],
  },
  {
    name: "PHP's \\/ (the tail after it)",
    secret: "p<a&ss>w/o-Zq8-tail",
    echo: JSON.stringify("p<a&ss>w/o-Zq8-tail").replace(/\//g, "\\/"),
    gone: ["Zq8", "tail"],
  },
  {
    name: "HTML numeric entities",
    secret: 'it\'s "Zq8" tail',
    echo: "it&#x27;s &#34;Zq8&#34; tail",
    gone: ["Zq8", "tail"],
  },
  {
    name: "lower-case percent-escapes",
    secret: "a b/c?d=e&Zq8",
    echo: "q=a%20b%2fc%3fd%3de%26Zq8",
    gone: ["Zq8"],
  },
  { name: "blanks stripped", secret: "  tok-Zq8-tail  ", echo: "bad token tok-Zq8-tail here", gone: ["Zq8"] },
  {
    name: "NFD sent, NFC echoed",
    secret: "cafe\u0301-Zq8-tail",
    echo: "x caf\u00e9-Zq8-tail y",
    gone: ["Zq8"],
  },
  {
    name: "NFC sent, NFD echoed",
    secret: "caf\u00e9-Zq8-tail",
    echo: "x cafe\u0301-Zq8-tail y",
    gone: ["Zq8"],
  },
  { name: "line ends as CRLF", secret: "line-one\nZq8-tail", echo: "line-one\r\nZq8-tail", gone: ["Zq8"] },
  { name: "upper-cased", secret: "tok-abcdef-zq8x", echo: "unknown key TOK-ABCDEF-ZQ8X", gone: ["ZQ8X"] },
  {
    name: "JSON inside a URL",
    secret: "p<a&ss>w/o-Zq8-tail",
    echo: encodeURIComponent(goJson("p<a&ss>w/o-Zq8-tail")).toLowerCase(),
    gone: ["zq8", "tail"],
  },
];

describe("echoes in a server's own escaping", () => {
  for (const c of CASES) {
    it(`redacts ${c.name}`, () => {
      const redacted = createSecretRedactor([c.secret]).redact(`bad: ${c.echo} end`);
      expect(redacted).toContain(REDACTED);
      for (const piece of c.gone) expect(redacted).not.toContain(piece);
      expect(redacted.startsWith("bad: ")).toBe(true);
      expect(redacted.endsWith(" end")).toBe(true);
    });
  }

  it("leaves text with escapes but no secret as it is", () => {
    const redactor = createSecretRedactor(["pa<ss&word>Zq8-tail"]);
    const text = 'a \\u003cb\\u003e &#39;c&#39; %2fd\\/e "\\u00E9"';
    expect(redactor.redact(text)).toBe(text);
  });

  it("keeps redactWhole (live values) exact in case: a live field that only differs in case is kept", () => {
    const redactor = createSecretRedactor(["tok-abcdef-zq8x"]);
    expect(redactor.redactWhole("img:TOK-ABCDEF-ZQ8X")).toBe("img:TOK-ABCDEF-ZQ8X");
    expect(redactor.redactWhole(`img:${goJson("tok-abcdef-zq8x")}`)).toContain(REDACTED);
  });
});

// The same through the transport, against a hostile server of our own: each answer a 400 echoing
// the secret in one of the spellings above, as `detail`, as a plain-text body, and in a redirect.
describe("a hostile control plane echoing in its own spelling", () => {
  let server: Server;
  let base = "";
  let answers: Array<{ status: number; body: string; headers?: Record<string, string> }> = [];
  beforeAll(async () => {
    server = createServer((_req, res) => {
      const answer = answers.shift() ?? { status: 500, body: "" };
      res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
      res.end(answer.body);
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((done) => server.close(done)));

  const failure = async (secret: string): Promise<ApiError> => {
    const client = createControlPlaneClient({
      apiUrl: base,
      apiKey: "key-0123456789",
      retry: { maxAttempts: 1 },
      redactor: createSecretRedactor([secret]),
    });
    const error = await client.getDeployment("d-1").then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  };

  for (const c of CASES) {
    it(`redacts ${c.name} in a 400's detail and a text body`, async () => {
      answers = [
        { status: 400, body: `{"detail": "bad: ${c.echo.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"}` },
        { status: 400, body: `bad: ${c.echo}`, headers: { "content-type": "text/plain" } },
      ];
      for (const error of [await failure(c.secret), await failure(c.secret)]) {
        const shown = `${error.message} ${JSON.stringify(error.detail)}`;
        expect(shown).toContain(REDACTED);
        for (const piece of c.gone) expect(shown).not.toContain(piece);
      }
    });
  }

  it("does not name a redirect's host when it is the secret, lower-cased by the URL parser", async () => {
    answers = [
      { status: 302, body: "", headers: { location: "https://Tok-ABCDEF-Zq8x.attacker.example/x" } },
    ];
    const error = await failure("Tok-ABCDEF-Zq8x");
    expect(error.message.toLowerCase()).not.toContain("zq8x");
    expect(error.message).toContain(REDACTED);
  });
});

describe("a long answer", () => {
  it("redacts a megabyte of text with an escape after half a million plain characters", () => {
    const secret = "p<a&ss>w/o-Zq8-tail";
    const text = `${"x".repeat(600_000)} ${goJson(secret)} ${"y".repeat(400_000)}`;
    const redacted = createSecretRedactor([secret]).redact(text);
    expect(redacted).not.toContain("Zq8");
    expect(redacted).toContain(REDACTED);
  });
});

describe("base64 broken into lines", () => {
  it("redacts an encoded echo that a 76-character line break cuts in two (MIME, Python's encodebytes)", () => {
    const secret = "verysecretvalue-1234567890-abcdef-Zq8TAIL";
    const redactor = createSecretRedactor([secret]);
    for (const before of ["", "a", "ab", 'bad: {"secrets":[{"value":"', "x".repeat(40)]) {
      const encoded = Buffer.from(`${before}${secret} trailing`).toString("base64");
      const mime = encoded.replace(/.{76}/g, "$&\n");
      for (const text of [mime, encoded.replace(/.{20}/g, "$&\r\n")]) {
        const redacted = redactor.redact(text);
        expect(redacted).toContain(REDACTED);
        for (const piece of redacted.replace(/\r?\n/g, "").split(REDACTED))
          for (const shift of ["", "A", "AA", "AAA"])
            expect(Buffer.from(shift + piece, "base64").toString("latin1")).not.toContain("Zq8");
      }
    }
  });
});
