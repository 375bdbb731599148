import { QesError } from "../errors.ts";
import { type AstNode, locationOf } from "../parse/parse-sql.ts";
import { type SqlType, typeName } from "./sql-type.ts";

/**
 * BigQuery's type properties (data types, "Data type properties"): a STRUCT is neither orderable
 * nor, here, groupable, and an ARRAY is not orderable. Each use is refused when the query compiles,
 * the same way on every backend: the engines disagree (DuckDB and ClickHouse order and group JSON
 * text as text, PostgreSQL has no equality for json and refused with its own words).
 */
function isStruct(type: SqlType): boolean {
  return type.t === "record" || type.t === "records";
}

/** ORDER BY keys (of a query, a window, an aggregate), MIN, MAX, GREATEST, LEAST. */
export function requireOrderable(type: SqlType, use: string, node?: AstNode): void {
  if (isStruct(type) || type.t === "array")
    throw new QesError(
      "sql_invalid",
      `${use} does not support expressions of type ${typeName(type)}.`,
      locationOf(node),
    );
}

/** GROUP BY keys, SELECT DISTINCT columns, PARTITION BY keys, DISTINCT aggregates and set operations. */
export function requireGroupable(type: SqlType, use: string, node?: AstNode): void {
  if (isStruct(type))
    throw new QesError(
      "sql_invalid",
      `${use} of expressions of type ${typeName(type)} is not allowed.`,
      locationOf(node),
    );
}
