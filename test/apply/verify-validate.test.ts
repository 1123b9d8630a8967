import { describe, expect, it } from "vitest";
import { brief, check, yaml } from "../manifest/helpers.js";

// spec.verify's cases in manifests: what the schema and the rules accept, and every error at its
// file:line (a bad pattern at its own line).

const deployment = (verify: string) => yaml`
apiVersion: plumb/v1
kind: Deployment
metadata:
  name: support-agent
spec:
  source: internal_container
  source_config: {}
  source_revision_config:
    image_uri: img/support:1
  verify:
${verify}`;

describe("spec.verify cases", () => {
  it("accepts the single smoke question as before, cases alone, and both with thresholds", () => {
    const smoke = deployment(yaml`
    assistant_id: agent
    input: {messages: [{role: user, content: ping}]}
    expect_contains: pong
`);
    const cases = deployment(yaml`
    assistant_id: agent
    repeat: 3
    min_pass_ratio: 0.9
    max_latency_p95_ms: 2000
    concurrency: 2
    cases:
      - name: echo
        input: hello there
        expect_contains: hello
      - name: ping
        input: {messages: [{role: user, content: ping}]}
        expect_regex: "^po+ng$"
        expect_not_contains: ping
`);
    const both = deployment(yaml`
    assistant_id: agent
    input: {messages: [{role: user, content: ping}]}
    cases:
      - {name: greet, input: hi}
`);
    for (const text of [smoke, cases, both]) expect(check(text).problems).toEqual([]);
    expect(check(cases).manifests[0]!.manifest.spec).toMatchObject({ verify: { repeat: 3 } });
  });

  it("reports a pattern that does not compile at its line", () => {
    const { problems } = check(
      deployment(yaml`
    assistant_id: agent
    cases:
      - name: fine
        input: hi
      - name: broken
        input: hi
        expect_regex: "(unclosed"
`),
    );
    expect(brief(problems)).toEqual(["17:23 error invalid-regex"]);
    expect(problems[0]!.message).toMatch(
      /^expect_regex is not a JavaScript regular expression: .*Unterminated group/,
    );
    expect(problems[0]!.field).toBe("spec.verify.cases[1].expect_regex");
  });

  it("needs something to ask, and expect_contains only beside input", () => {
    const { problems } = check(
      deployment(yaml`
    assistant_id: agent
    expect_contains: pong
`),
    );
    expect(brief(problems)).toEqual(["10:3 error verify-nothing-to-ask", "12:5 error field-not-applicable"]);
  });

  it("refuses two cases of one name, and a case named like the smoke question", () => {
    const { problems } = check(
      deployment(yaml`
    assistant_id: agent
    input: {messages: [{role: user, content: ping}]}
    cases:
      - {name: a, input: x}
      - {name: a, input: y}
      - {name: smoke, input: z}
`),
    );
    expect(brief(problems)).toEqual(["15:16 error duplicate-case", "16:16 error duplicate-case"]);
  });

  it("checks the schema's bounds: repeat, min_pass_ratio, an unknown expectation", () => {
    const { problems } = check(
      deployment(yaml`
    assistant_id: agent
    repeat: 0
    min_pass_ratio: 1.5
    cases:
      - name: a
        input: x
        expect_equals: x
`),
    );
    expect(problems.map((p) => `${p.line} ${p.code}`).sort()).toEqual([
      "12 out-of-range",
      "13 out-of-range",
      "17 unknown-field",
    ]);
  });
});
