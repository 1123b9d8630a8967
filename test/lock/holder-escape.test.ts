import { expect, it } from "vitest";
import { describeHolder } from "../../src/lock/holder.js";

// A holder is read from a lock file: a clone's committed one or a status branch's lease, anyone's
// text. Named in "held by ..." errors and `plumb unlock`, its control characters are escaped.

it("escapes control characters of a holder read from a lock file", () => {
  const text = describeHolder({
    id: "x",
    host: "build\u001b[2J-7",
    pid: 1,
    command: "plumb apply\n::add-mask::y",
    since: "2026-11-26T00:00:00.000Z\u009b",
  });
  expect(text).toBe(
    "plumb apply\\n::add-mask::y (pid 1 on build\\u001b[2J-7) since 2026-11-26T00:00:00.000Z\\u009b",
  );
});
