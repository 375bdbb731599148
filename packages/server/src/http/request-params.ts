import { QesError } from "@qes/core";

/**
 * The query-string parameters of a request as one string each. A parameter repeated with
 * different values is ambiguous and refused; repeated with the same value it counts once.
 */
export function queryStringParams(originalUrl: string): Record<string, string> {
  const q = originalUrl.indexOf("?");
  const params: Record<string, string> = Object.create(null);
  if (q === -1) return params;
  for (const [key, value] of new URLSearchParams(originalUrl.slice(q + 1))) {
    const seen = params[key];
    if (seen !== undefined && seen !== value) {
      throw new QesError(
        "invalid_parameter",
        `Parameter "${key}" is given more than once with different values.`,
        {
          param: key,
        },
      );
    }
    params[key] = value;
  }
  return params;
}

/** Header value listing parameter names; names are percent-encoded so any name is a valid header value. */
export function headerList(names: readonly string[]): string {
  return names.map((n) => encodeURIComponent(n)).join(", ");
}
