import type { Backend } from "@qes/core";

/**
 * The real backend, whose `execute` can be made to fail on demand with a given error (a plain
 * Error stands for a bug: the client must get 500 internal without details).
 */
export function faultyBackend(real: Backend): { backend: Backend; failWith(e: unknown): void } {
  let failure: unknown;
  const backend = new Proxy(real, {
    get(target, prop) {
      if (prop === "execute" && failure !== undefined) {
        const e = failure;
        return () => Promise.reject(e);
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return {
    backend,
    failWith(e) {
      failure = e;
    },
  };
}
