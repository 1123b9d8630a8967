import type { LoadedEnvironment } from "../../manifest/types.js";
import { promotionOrder } from "../../status-page/matrix-model.js";

// The order the environments of one command run in (docs/environments.md).

/**
 * The selected environments in promotion order (as plumb status's matrix orders them): each chain
 * from its start, every environment right after the one it is promoted from, then the rest (and
 * any cycle) by name. --env selects; it does not reorder: staging is applied before prod.
 */
export function inPromotionOrder(environments: readonly LoadedEnvironment[]): LoadedEnvironment[] {
  const byName = new Map(environments.map((e) => [e.manifest.metadata.name, e]));
  const order = promotionOrder(
    environments.map((e) => ({
      name: e.manifest.metadata.name,
      promotion_from: e.manifest.spec.promotion?.from ?? null,
    })),
  );
  return order.map((name) => byName.get(name)!);
}
