import type { ConformanceCase } from "../../support/case.ts";
import type { EventStore, Row } from "../../support/oracle.ts";

/** request parameters of logs.all: the consumer query reads its CTEs, filtered by these */
export type LogsAllParams = { project: string; iso_timestamp_start?: string; iso_timestamp_end?: string };

/** a consumer query (the `sql` parameter of logs.all) and its oracle */
export function consumer(
  name: string,
  sql: string,
  oracle: (events: EventStore, params: LogsAllParams) => Row[],
  opts: { params?: LogsAllParams; ordered?: boolean; rule?: string } = {},
): ConformanceCase {
  const params = opts.params ?? { project: "alpha" };
  return {
    name,
    rule: opts.rule ?? "DESIGN §5: consumer SQL replaces logs.all's final SELECT and reads its CTEs",
    endpoint: "logs.all",
    params: params as Record<string, string>,
    sql,
    ...(opts.ordered === false ? { ordered: false } : {}),
    oracle: (events) => ({ rows: oracle(events, params) }),
  };
}

/** count(*) style: a row per group key with its count, as the oracle builds it */
export function counted<K extends string>(
  groups: Map<string | number | boolean | bigint | null, unknown[]>,
  keyName: K,
  countName = "count",
): Row[] {
  return [...groups.entries()].map(([k, items]) => ({
    [keyName]: typeof k === "bigint" ? Number(k) : k,
    [countName]: items.length,
  }));
}
