export { createApp } from "./app.ts";
export { ApiKeyVerifier, hashToken, parseApiKeys } from "./auth/api-keys.ts";
export { resolveApiKeys } from "./auth/configured-keys.ts";
export { type Principal, principalAllows } from "./auth/principal.ts";
export { openBackend } from "./backend/open-backend.ts";
export { checkEndpoints, formatProblem } from "./check/check-endpoints.ts";
export { loadConfig, type QesConfig } from "./config.ts";
export { BUILTIN_ENDPOINTS_DIR, loadServedEndpoints } from "./endpoint-dirs.ts";
export { toHttpError } from "./errors/http-errors.ts";
export { createLogger } from "./logging/logger.ts";
export type { TimeSpread } from "./seed/event-time.ts";
export {
  eventsPerSource,
  type GenerateOptions,
  generateEvents,
  isSeedSource,
  type SeedSource,
  SOURCE_SHARES,
} from "./seed/generate-events.ts";
export { SEED_PROJECTS } from "./seed/projects.ts";
export { seedStore } from "./seed/seed-store.ts";
export { type RunningService, startService } from "./service.ts";
