// Lets a child `node` process run the TypeScript sources directly (tests that kill -9 a real
// server process): `node --import ./test/control-plane/support/register-ts.mjs src/cli/main.ts`.
import { register } from "node:module";

register("./ts-hooks.mjs", import.meta.url);
