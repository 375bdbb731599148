/** How one engine asks three questions of a list value (its SQL is given as `list`). */
export interface ListOps {
  /** the number of elements (NULL or 0 for a NULL list) */
  length(list: string): string;
  /** whether an element equals `value` (TRUE or FALSE for a non-NULL value) */
  contains(list: string, value: string): string;
  /** whether some element is NULL */
  holdsNull(list: string): string;
}

/**
 * `value IN UNNEST(list)` as BigQuery answers it, the IN of a subquery over the elements: FALSE
 * for an empty (or NULL) list whatever the value; NULL for a NULL value otherwise; TRUE when an
 * element equals the value; NULL when none does but one is NULL (it might); FALSE otherwise.
 * DuckDB's list_contains and ClickHouse's has answered FALSE where a NULL element makes it NULL,
 * so `1 NOT IN UNNEST([2, NULL])` kept rows BigQuery drops.
 */
export function inArraySql(list: string, value: string, ops: ListOps): string {
  return (
    `CASE WHEN coalesce(${ops.length(list)}, 0) = 0 THEN false ` +
    `WHEN ${value} IS NULL THEN NULL ` +
    `WHEN ${ops.contains(list, value)} THEN true ` +
    `WHEN ${ops.holdsNull(list)} THEN NULL ELSE false END`
  );
}
