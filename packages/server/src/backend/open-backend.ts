import type { Backend } from "@qes/core";
import type { QesConfig } from "../config.ts";
import { BACKEND_PLUGINS } from "./backend-registry.ts";

/**
 * The backend chosen by `QES_BACKEND`, created from the registry and initialised (the nine
 * sources exist afterwards). Its package is imported only now, when chosen.
 */
export async function openBackend(config: QesConfig): Promise<Backend> {
  const backend = await BACKEND_PLUGINS[config.backend].create(config.backendConfig);
  try {
    await backend.init();
  } catch (e) {
    await backend.close().catch(() => {});
    throw e;
  }
  return backend;
}

/** The file or directory of an embedded store only this process may open, if the backend has one. */
export function exclusiveStoreOf(config: QesConfig): string | undefined {
  return BACKEND_PLUGINS[config.backend].exclusiveStore?.(config.backendConfig);
}
