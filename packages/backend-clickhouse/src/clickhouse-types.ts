import type { ScalarType } from "@qes/core";
import { clickhouseColumnType } from "./clickhouse-storage.ts";

/**
 * The type of a BigQuery scalar in queries: the storage column's type (one mapping for DDL and
 * queries), Nullable since every value of a query may be NULL (BigQuery). TIMESTAMP and DATETIME
 * are both DateTime64(6, 'UTC') (a DATETIME is the wall-clock reading labelled UTC; the compiler
 * keeps the two apart); DATE is Date32.
 */
export function nullableType(type: ScalarType): string {
  return `Nullable(${clickhouseColumnType(type)})`;
}

/**
 * An INT64 result computed wider (Int128, or UInt64 from `abs`), narrowed so that a value outside
 * INT64 raises, as BigQuery's overflow does: ClickHouse's Int64 arithmetic wraps silently. To
 * `Int64`, not `Nullable(Int64)`: with `cast_keep_nullable` a NULL stays NULL, and a value that
 * cannot be NULL stays a plain Int64 (lagInFrame's offset refuses a Nullable one).
 */
export function checkedInt64(wide: string): string {
  return `accurateCast(${wide}, 'Int64')`;
}

/**
 * Settings every compiled query needs for BigQuery's semantics; the executor sends them in the
 * query's SETTINGS with its limits (before `readonly`):
 * - `join_use_nulls`: an outer join's missing side is NULL, not the type's default;
 * - `aggregate_functions_null_for_empty`: SUM/MIN/MAX/AVG over no rows are NULL;
 * - `enable_positional_arguments` off: `ORDER BY 1` orders by the constant 1, as written;
 * - `cast_keep_nullable`: casting a Nullable value keeps NULL instead of failing;
 * - `transform_null_in` off: `NULL IN (…)` is NULL;
 * - `prefer_column_name_to_alias`: a column named like a SELECT alias means the column;
 * - `query_plan_max_limit_for_lazy_materialization` 0 (no bound; 10,000 by default): the rows at
 *   a leading-key cut are selected under a LIMIT that keeps them all (ordersCutRowsOutside), and
 *   the columns that LIMIT does not sort by are read for its rows only.
 */
export const CLICKHOUSE_QUERY_SETTINGS = {
  join_use_nulls: 1,
  aggregate_functions_null_for_empty: 1,
  enable_positional_arguments: 0,
  cast_keep_nullable: 1,
  transform_null_in: 0,
  prefer_column_name_to_alias: 1,
  query_plan_max_limit_for_lazy_materialization: 0,
  // simdjson, which reads every double exactly: RapidJSON read one in eight random doubles as a
  // neighbouring one (111.33861541748047) and 1.2345678901234568e20 written as JavaScript writes it
  // as 123456789012345670000. simdjson gives up on a whole document holding an integer literal
  // beyond 64 bits (core writes 1e20 as 100000000000000000000): every JSON read goes through
  // readableJson (clickhouse-json-text.ts), which makes such a literal a double first.
  allow_simdjson: 1,
} as const;
