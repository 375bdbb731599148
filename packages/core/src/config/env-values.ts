import { QesError } from "../errors.ts";

/**
 * Reading configuration variables (DESIGN.md §8), shared by the server and every backend package
 * (each parses its own variables): unset and empty mean "use the default"; a bad value throws
 * QesError('invalid_config') naming the variable.
 */
export type Env = Readonly<Record<string, string | undefined>>;

export function badConfig(name: string, message: string): never {
  throw new QesError("invalid_config", `${name}: ${message}`, { param: name });
}

export function envText(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === "" ? undefined : v.trim();
}

export function envInteger(env: Env, name: string, fallback: number, min: number, max: number): number {
  const v = envText(env, name);
  if (v === undefined) return fallback;
  if (!/^\d+$/.test(v)) badConfig(name, `"${v}" is not a whole number`);
  const n = Number(v);
  if (n < min || n > max) badConfig(name, `${n} is outside ${min}…${max}`);
  return n;
}

const UNITS: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  tib: 1024 ** 4,
};
const SIZE = /^(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i;

/** A size such as `512MB` or `1GB`, as written (engines read the text themselves). */
export function envSizeText(env: Env, name: string, fallback: string): string {
  const v = envText(env, name) ?? fallback;
  if (!SIZE.test(v)) badConfig(name, `"${v}" is not a size such as 512MB or 1GB`);
  return v;
}

/** A size in bytes: `4GB`, `512MiB` or a whole number of bytes; undefined when unset. */
export function envSizeBytes(env: Env, name: string): number | undefined {
  const v = envText(env, name);
  if (v === undefined) return undefined;
  if (/^\d+$/.test(v)) return Number(v);
  const m = SIZE.exec(v);
  if (!m) return badConfig(name, `"${v}" is not a size such as 4GB, 512MiB or a number of bytes`);
  return Math.round(Number(m[1]) * UNITS[m[2]!.toLowerCase()]!);
}

/** A URL with one of `protocols` (`"http:"`), or undefined when unset. */
export function envUrl(env: Env, name: string, protocols: readonly string[]): string | undefined {
  const v = envText(env, name);
  if (v === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(v);
  } catch {
    return badConfig(name, "is not a URL");
  }
  if (!protocols.includes(parsed.protocol))
    badConfig(name, `must start with ${protocols.map((p) => `${p}//`).join(" or ")}`);
  return v;
}
