import type { CutFirstSql } from "../dialect/dialect.ts";
import type { ScalarType } from "../schema/schema-model.ts";
import type { WireType } from "../wire/wire-type.ts";

export interface OutputColumn {
  name: string;
  type: WireType;
}

/** One positional parameter of the emitted SQL (`$1` is `params[0]`). */
export interface SqlParam {
  /** endpoint parameter name, or `now` for CURRENT_TIMESTAMP() of the request */
  name: string;
  type: ScalarType;
  kind: "endpoint" | "now";
  /** a regular expression here: bound through the dialect's `bindPattern` */
  pattern?: boolean;
  /** a time zone here: checked against the tz database, bound through the dialect's `bindZone` */
  zone?: boolean;
}

/**
 * A query ready for one backend: SQL in that backend's dialect with positional parameters, the
 * output columns with their wire types, and what it was compiled against.
 */
export interface CompiledQuery {
  sql: string;
  params: SqlParam[];
  columns: OutputColumn[];
  /**
   * The same rows by a cheaper plan that may have to give up (`EmittedSql.readAhead`), for an
   * executor that runs it first: its rows end with one more value, `__retry`; when that is 1, the
   * result is `sql`'s. Same parameters.
   */
  readAhead?: string;
  /**
   * The same rows in two steps, for an executor that runs them (`EmittedSql.cutFirst`): `cut`
   * with the query's values at positions `cutValues` gives one value; `sql` with the values and
   * that value after them.
   */
  cutFirst?: CutFirstSql;
  schemaVersion: number;
  dialect: string;
  /** endpoint parameters used as regular-expression patterns (validated per request) */
  patternParams: string[];
  /** a pattern parameter's value as the engine reads it (the dialect's `bindPattern`) */
  bindPattern?: (pattern: string) => string;
  /** a time-zone parameter's value as the engine reads zones (the dialect's `bindZone`) */
  bindZone?: (zone: string) => string;
}

/**
 * Values for a compiled query's parameters, in `CompiledQuery.params` order. Every value is
 * text (or NULL); the emitted SQL casts each parameter to its type, so binding is lossless:
 * TIMESTAMP as `YYYY-MM-DD HH:MM:SS.ffffff` (UTC), INT64 as decimal digits.
 */
export type BoundValues = (string | null)[];
