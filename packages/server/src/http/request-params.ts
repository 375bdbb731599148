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

/** Longest header value `headerList` writes: a client (Node's own: 16 KiB) refuses longer headers. */
export const MAX_HEADER_LIST = 2048;

/**
 * Header value listing parameter names; names are percent-encoded so any name is a valid header
 * value. A POST body may name thousands: past `MAX_HEADER_LIST` characters the list ends in
 * ` (+N more)`, which no encoded name can be mistaken for (encoded names hold no space).
 */
export function headerList(names: readonly string[]): string {
  let out = "";
  for (let i = 0; i < names.length; i++) {
    const item = (i > 0 ? ", " : "") + encodeURIComponent(names[i]!);
    if (out.length + item.length > MAX_HEADER_LIST) {
      const more = `(+${names.length - i} more)`;
      return i > 0 ? `${out}, ${more}` : more;
    }
    out += item;
  }
  return out;
}
