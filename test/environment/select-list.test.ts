import { describe, expect, it } from "vitest";
import { selectEnvironments } from "../../src/environment/select.js";
import type { LoadedEnvironment } from "../../src/manifest/types.js";

// --env staging,prod (a CI job's input holding a list): every part a defined environment, the
// refusal says --env takes one name and how to pass them (docs/environments.md "--env on ..."); it
// said "unknown environment" with no hint.

const defined = ["onprem", "prod", "staging"].map(
  (name) => ({ manifest: { metadata: { name } } }) as unknown as LoadedEnvironment,
);
const select = (requested: string[]) => () => selectEnvironments(defined, requested);

describe("--env given a list", () => {
  it("comma or space separated: says to repeat --env", () => {
    expect(select(["staging,prod"])).toThrow(
      'unknown environment "staging,prod" in --env; defined: onprem, prod, staging (--env takes one name: pass --env staging --env prod)',
    );
    expect(select(["staging prod"])).toThrow("pass --env staging --env prod");
  });

  it("a list with a name not defined gets no such hint", () => {
    expect(select(["staging,qa"])).not.toThrow("--env takes one name");
  });

  it("a name in capitals suggests the lowercase one defined", () => {
    expect(select(["STAGING"])).toThrow('(did you mean "staging"?)');
    expect(select(["Prod"])).toThrow('(did you mean "prod"?)');
  });
});
