import type { RunEvent, RunStore } from "@capgate/loop";

/**
 * The store with every appended event also handed to `observe` (after the store took it):
 * everything a loop, chat or gate session records passes here, so telemetry needs no hook
 * in the loop. Every other member — `saveAttachment` and the like included — is the store's
 * own, bound to it.
 */
export function observedRunStore(store: RunStore, observe: (event: RunEvent) => void): RunStore {
  const append = (event: RunEvent): void => {
    store.append(event);
    try {
      observe(event);
    } catch {
      // Telemetry never breaks a run.
    }
  };
  return new Proxy(store, {
    get(target, property) {
      if (property === "append") return append;
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
