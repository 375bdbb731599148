import type { FunctionTableName } from "../dialect/function-table.ts";
import type { ScalarType } from "../schema/schema-model.ts";
import type { SqlType } from "./sql-type.ts";

/**
 * The typed, dialect-neutral query tree the analyser builds from BigQuery's AST and a dialect
 * emits. Names in it are physical (tables, columns, generated aliases); BigQuery's name
 * resolution, record flattening and coercions have already happened.
 */
export type Expr =
  | { k: "lit"; value: string | number | bigint | boolean | null; type: SqlType }
  /** positional parameter `$index` (1-based), cast to its type by the dialect */
  | { k: "param"; index: number; type: SqlType }
  /** a physical column of a FROM item */
  | { k: "col"; rel: string; col: string; type: SqlType; fromJson?: boolean; notNull?: boolean }
  /** a value read from JSON text at a relative path (below arrays, or whole nested objects) */
  | { k: "json"; base: Expr; path: string[]; type: SqlType; fromJson: true }
  | {
      k: "call";
      fn: FunctionTableName;
      args: Expr[];
      type: SqlType;
      agg?: AggregateOptions;
      over?: WindowSpec;
      /** where the call is in the SQL, for errors only a dialect finds (a FORMAT it cannot write) */
      at?: { line: number; column: number };
      /** `FIRST_VALUE(x IGNORE NULLS)`, LAST_VALUE, NTH_VALUE: the window skips NULL values */
      ignoreNulls?: true;
      /** `SAFE.fn(…)`: the errors the function itself raises are NULL (its arguments' are not) */
      safe?: true;
    }
  | { k: "op"; op: string; args: Expr[]; type: SqlType }
  | { k: "case"; operand?: Expr; whens: Array<[Expr, Expr]>; else?: Expr; type: SqlType }
  | { k: "cast"; expr: Expr; to: ScalarType; safe: boolean; type: SqlType }
  | { k: "interval"; value: Expr; unit: string; type: SqlType }
  | { k: "datepart"; part: string; type: SqlType }
  | { k: "star"; type: SqlType }
  | { k: "in"; expr: Expr; list: Expr[]; not: boolean; type: SqlType }
  | {
      k: "subquery";
      query: Query;
      mode: "scalar" | "exists" | "in" | "array";
      expr?: Expr;
      not?: boolean;
      type: SqlType;
    };

export interface AggregateOptions {
  distinct?: boolean;
  orderBy?: OrderItem[];
  limit?: number;
  ignoreNulls?: boolean;
}

export interface WindowSpec {
  partitionBy: Expr[];
  orderBy: OrderItem[];
  frame?: string;
}

export interface OrderItem {
  expr: Expr;
  desc: boolean;
  nulls?: "first" | "last";
}

export interface SelectItem {
  expr: Expr;
  /** physical output name (unique within the select) */
  name: string;
}

export type FromItem =
  | { k: "table"; table: string; alias: string }
  | { k: "cte"; name: string; alias: string }
  | { k: "subquery"; query: Query; alias: string }
  /** a real array expanded to rows: JSON text array → one row per element (`alias.value`) */
  | { k: "unnest"; array: Expr; alias: string; elementType: SqlType; withOffset: boolean };

export interface Join {
  kind: "inner" | "left" | "right" | "full" | "cross";
  item: FromItem;
  on?: Expr;
}

export interface Select {
  k: "select";
  distinct: boolean;
  items: SelectItem[];
  from?: FromItem;
  joins: Join[];
  where: Expr[];
  groupBy: Expr[];
  having?: Expr;
  qualify?: Expr;
  orderBy: OrderItem[];
  limit?: Expr;
  offset?: Expr;
}

export interface SetOp {
  k: "setop";
  op: "union all" | "union distinct" | "except distinct" | "intersect distinct";
  left: Query;
  right: Query;
  orderBy: OrderItem[];
  limit?: Expr;
  offset?: Expr;
}

export interface Cte {
  name: string;
  query: Query;
}

export type Body = Select | SetOp;

export interface Query {
  ctes: Cte[];
  body: Body;
}
