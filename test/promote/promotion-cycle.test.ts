import { describe, expect, it } from "vitest";
import { checkFiles, yaml } from "../manifest/helpers.js";

// spec.promotion.from chains: a cycle (or an environment promoted from itself) is an error at
// each from: of the cycle, with file:line, naming the cycle.

const env = (name: string, from?: string) => yaml`
apiVersion: plumb/v1
kind: Environment
metadata:
  name: ${name}
spec:
  api_url: http://127.0.0.1:8123
  api_key: {env: KEY}
${from ? `  promotion:\n    from: ${from}\n` : ""}`;

const where = (files: Record<string, string>) =>
  checkFiles(files).problems.map((p) => `${p.file}:${p.line}:${p.column} ${p.code}: ${p.message}`);

describe("promotion.from cycles", () => {
  it("a chain ending in an environment promoted from none is valid", () => {
    expect(
      where({
        "dev.yaml": env("dev"),
        "staging.yaml": env("staging", "dev"),
        "prod.yaml": env("prod", "staging"),
      }),
    ).toEqual([]);
  });

  it("an environment promoted from itself is an error at its from:", () => {
    expect(where({ "prod.yaml": env("prod", "prod") })).toEqual([
      "prod.yaml:9:11 promotion-cycle: environment prod is promoted from itself; name the environment its versions are verified in first",
    ]);
  });

  it("a cycle is reported at each of its environments, naming the cycle", () => {
    const problems = where({
      "dev.yaml": env("dev"),
      "prod.yaml": env("prod", "staging"),
      "staging.yaml": env("staging", "qa"),
      "qa.yaml": env("qa", "prod"),
    });
    expect(problems).toEqual([
      "prod.yaml:9:11 promotion-cycle: promotion.from makes a cycle (prod <- staging <- qa <- prod); one environment of it must be promoted from none or from another",
      "qa.yaml:9:11 promotion-cycle: promotion.from makes a cycle (qa <- prod <- staging <- qa); one environment of it must be promoted from none or from another",
      "staging.yaml:9:11 promotion-cycle: promotion.from makes a cycle (staging <- qa <- prod <- staging); one environment of it must be promoted from none or from another",
    ]);
  });
});
