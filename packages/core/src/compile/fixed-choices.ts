import type { EndpointDefinition } from "../endpoint/endpoint-definition.ts";

/**
 * The request's choices among a parameter's `allowed` values, compiled as literals. The literal is
 * the endpoint definition's own string (the request only picks which one), so no request text
 * reaches the SQL. Engines then fold what depends on the choice: a CASE over `@interval` becomes
 * one bucket and one window, and the window's bound prunes partitions and drives the sorting key,
 * which a CASE over a bound parameter does not on DuckDB or ClickHouse. A value that is not
 * allowed, or an absent one without a default, is left to bindRequestParams to refuse or bind.
 */
export function fixedChoices(
  endpoint: EndpointDefinition,
  request: Readonly<Record<string, string | undefined>> | undefined,
): Map<string, string> {
  const fixed = new Map<string, string>();
  if (!request) return fixed;
  for (const [name, spec] of Object.entries(endpoint.params)) {
    if (spec.kind !== "string" || !spec.allowed) continue;
    const value = (Object.hasOwn(request, name) ? request[name] : undefined) ?? spec.default;
    const chosen = spec.allowed.find((v) => v === value);
    if (chosen !== undefined) fixed.set(name, chosen);
  }
  return fixed;
}
