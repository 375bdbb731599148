/**
 * The argument of a window function that counts rows, and the least value it may take (BigQuery):
 * LAG's and LEAD's offset must not be negative, NTILE's bucket count and NTH_VALUE's row number
 * must be positive, and none may be NULL. A literal is checked when the query compiles; a bound
 * parameter when it runs (`checkedWindowCount`).
 */
export const WINDOW_COUNT_ARGS: Readonly<Record<string, { at: number; least: number; what: string }>> = {
  NTILE: { at: 0, least: 1, what: "bucket count" },
  LAG: { at: 1, least: 0, what: "offset" },
  LEAD: { at: 1, least: 0, what: "offset" },
  NTH_VALUE: { at: 1, least: 1, what: "row number" },
};

/**
 * What a window function's count must be, as BigQuery says it (`LAG's offset must not be
 * negative`), and that it must not be NULL (`orNull`: a bound one can be).
 */
export function windowCountRule(fn: string, orNull = false): string {
  const count = WINDOW_COUNT_ARGS[fn]!;
  if (count.least === 1) return `${fn}'s ${count.what} must be positive${orNull ? " and not NULL" : ""}`;
  return `${fn}'s ${count.what} must not be negative${orNull ? " or NULL" : ""}`;
}
