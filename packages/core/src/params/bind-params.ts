import type { BoundValues, CompiledQuery } from "../compile/compiled-query.ts";
import { zoneRules } from "../dialect/time-zones.ts";
import type { EndpointDefinition, ParamSpec } from "../endpoint/endpoint-definition.ts";
import { QesError } from "../errors.ts";
import { checkRegexPattern } from "../sandbox/regex-subset.ts";
import { formatTimestampMicros, requireTimestampMicros } from "./parse-timestamp.ts";

export interface BoundRequest {
  /** values in `CompiledQuery.params` order */
  values: BoundValues;
  /** request parameters the endpoint does not declare (named in `QES-Ignored-Params`) */
  ignored: string[];
  /** declared parameters after validation and normalisation: the cache key's parameter part */
  canonical: Record<string, string | null>;
}

/** Parameters the service itself reads, never bound to SQL. */
const SERVICE_PARAMS = new Set(["sql", "api_key"]);

const INT64 = /^-?\d{1,19}$/;
const INT64_MAX = 9223372036854775807n;

/**
 * Validates request values (always strings) against the endpoint's declared parameters and binds
 * them by position; request values are never interpolated into SQL (DESIGN.md §5).
 */
export function bindRequestParams(
  endpoint: EndpointDefinition,
  compiled: CompiledQuery,
  raw: Record<string, string | undefined>,
  nowMicros: bigint,
): BoundRequest {
  const canonical: Record<string, string | null> = Object.create(null);
  for (const [name, spec] of Object.entries(endpoint.params)) {
    canonical[name] = normaliseParam(name, spec, raw[name]);
  }
  for (const name of compiled.patternParams) {
    const value = canonical[name];
    if (value != null) {
      const problem = checkRegexPattern(value);
      if (problem) {
        throw new QesError(
          "invalid_parameter",
          `Parameter "${name}" is not a valid regular expression: ${problem}.`,
          {
            param: name,
          },
        );
      }
    }
  }
  const ignored = Object.keys(raw)
    .filter((name) => !Object.hasOwn(endpoint.params, name) && !SERVICE_PARAMS.has(name))
    .sort();
  const values = compiled.params.map((p) => {
    if (p.kind === "now") return formatTimestampMicros(nowMicros);
    const value = canonical[p.name] ?? null;
    if (value === null) return value;
    if (p.pattern && compiled.bindPattern) return compiled.bindPattern(value);
    if (p.zone) return bindZone(p.name, value, compiled);
    return value;
  });
  return { values, ignored, canonical };
}

/** A time-zone parameter: a zone the tz database knows (else 400), as the engine reads zones. */
function bindZone(name: string, value: string, compiled: CompiledQuery): string {
  try {
    zoneRules(value);
  } catch {
    throw new QesError("invalid_parameter", `Parameter "${name}" is not a known time zone.`, { param: name });
  }
  return compiled.bindZone ? compiled.bindZone(value) : value;
}

function normaliseParam(name: string, spec: ParamSpec, given: string | undefined): string | null {
  const value = given ?? spec.default;
  if (spec.required && (value === undefined || value === "")) {
    throw new QesError(
      "missing_parameter",
      spec.allowed
        ? `Parameter "${name}" is required; one of: ${spec.allowed.join(", ")}.`
        : `Parameter "${name}" is required.`,
      { param: name, ...(spec.allowed ? { allowed: spec.allowed } : {}) },
    );
  }
  if (value === undefined) return null;
  if (spec.allowed && !spec.allowed.includes(value)) {
    throw new QesError(
      "invalid_parameter",
      `Parameter "${name}" must be one of ${spec.allowed.join(", ")}; got "${value}".`,
      { param: name, allowed: spec.allowed },
    );
  }
  switch (spec.kind) {
    case "string":
      return value;
    case "timestamp":
      return value === "" ? null : formatTimestampMicros(requireTimestampMicros(value, name));
    case "integer": {
      if (value === "") return null;
      if (!INT64.test(value) || BigInt(value) > INT64_MAX || BigInt(value) < -INT64_MAX - 1n) {
        throw new QesError(
          "invalid_parameter",
          `Parameter "${name}" must be a 64-bit integer; got "${value}".`,
          {
            param: name,
          },
        );
      }
      return BigInt(value).toString();
    }
  }
}
