import { fileURLToPath } from "node:url";
import { type EndpointRegistry, loadEndpoints } from "@qes/core";

/** the built-in endpoint files shipped with the server (`packages/server/endpoints`) */
export const BUILTIN_ENDPOINTS_DIR = fileURLToPath(new URL("../endpoints", import.meta.url));

/** built-ins first, then each `QES_ENDPOINTS_DIR` entry, adding or overriding by name */
export function loadServedEndpoints(extraDirs: readonly string[]): Promise<EndpointRegistry> {
  return loadEndpoints([BUILTIN_ENDPOINTS_DIR, ...extraDirs]);
}
