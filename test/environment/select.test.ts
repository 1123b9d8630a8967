import { describe, expect, it } from "vitest";
import { selectEnvironments } from "../../src/environment/select.js";
import type { LoadedEnvironment } from "../../src/manifest/types.js";

// --env NAME: the environments a command runs, in the order given. A name that is not defined is a
// usage error listing those that are, with the closest one suggested, its control characters
// escaped (the name comes from a command line, often a CI job's input, and is printed on stderr).

const defined = ["onprem", "prod", "staging"].map(
  (name) => ({ manifest: { metadata: { name } } }) as unknown as LoadedEnvironment,
);
const names = (requested: string[]) =>
  selectEnvironments(defined, requested).map((e) => e.manifest.metadata.name);

describe("selectEnvironments", () => {
  it("runs those named, once each, in the order given; every one when none is named", () => {
    expect(names(["staging", "prod", "staging"])).toEqual(["staging", "prod"]);
    expect(names([])).toEqual(["onprem", "prod", "staging"]);
  });

  it("suggests the closest name for a typo", () => {
    expect(() => names(["prdo"])).toThrow(
      'unknown environment "prdo" in --env; defined: onprem, prod, staging (did you mean "prod"?)',
    );
    expect(() => names(["qa"])).toThrow('unknown environment "qa" in --env; defined: onprem, prod, staging');
    expect(() => names(["qa"])).not.toThrow("did you mean");
  });

  it("prints a name's control characters escaped", () => {
    expect(() => names(["prod\n::add-mask::x\u001b[2J"])).toThrow(
      'unknown environment "prod\\n::add-mask::x\\u001b[2J" in --env',
    );
  });
});
