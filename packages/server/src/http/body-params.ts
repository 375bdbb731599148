import { QesError } from "@qes/core";

/**
 * The parameters of a POST (DESIGN.md §7): a flat JSON object of string values merged with the
 * query string. A parameter given in both with different values is a 400 `invalid_parameter`.
 */
export function mergeBodyParams(query: Record<string, string>, body: unknown): Record<string, string> {
  if (body === undefined) return query;
  // JSON `null` is a body too, and not an object
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new QesError("invalid_parameter", "The request body must be a JSON object of string values.");
  }
  const params: Record<string, string> = Object.assign(Object.create(null), query);
  for (const [name, value] of Object.entries(body)) {
    if (typeof value !== "string") {
      throw new QesError("invalid_parameter", `Parameter "${name}" in the request body must be a string.`, {
        param: name,
      });
    }
    const given = query[name];
    if (given !== undefined && given !== value) {
      throw new QesError(
        "invalid_parameter",
        `Parameter "${name}" is given in the query string and in the body with different values.`,
        { param: name },
      );
    }
    params[name] = value;
  }
  return params;
}
