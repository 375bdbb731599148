import { resolve } from "node:path";
import { type ApiKey, ensureGeneratedToken, hashToken, parseApiKeys } from "./api-keys.ts";

export interface ResolvedKeys {
  keys: ApiKey[];
  /**
   * the generated token, to show once on the terminal at start (never through the logger);
   * absent when QES_API_KEYS configures the tokens
   */
  generated?: { token: string; file: string; created: boolean };
}

/** where the generated token lives when QES_API_KEYS is unset */
export const DEFAULT_TOKEN_FILE = "./data/api-key";

/** The tokens a server accepts: `QES_API_KEYS` when set, else one generated token kept in a file. */
export async function resolveApiKeys(
  apiKeys: string | undefined,
  tokenFile = DEFAULT_TOKEN_FILE,
): Promise<ResolvedKeys> {
  if (apiKeys !== undefined) return { keys: parseApiKeys(apiKeys) };
  const file = resolve(tokenFile);
  const { token, created } = await ensureGeneratedToken(file);
  return { keys: [{ hash: hashToken(token) }], generated: { token, file, created } };
}
