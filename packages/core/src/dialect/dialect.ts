import type { Query } from "../compile/ir.ts";

/**
 * A SQL dialect: how the compiler's typed query tree is written for one engine. The default
 * emitter (sql-emitter.ts) writes standard SQL; a dialect overrides only what differs.
 */
export interface Dialect {
  readonly name: string;
  /**
   * A regular-expression parameter's value (RE2, checked by sandbox/regex-subset.ts) as this
   * engine reads patterns, applied when a request's values are bound. Absent: the engine reads
   * RE2 as it is.
   */
  bindPattern?(pattern: string): string;
  /**
   * A time-zone parameter's value (a tz database name or an offset such as `+05:30`, known to
   * core's zoneRules) as this engine's zone argument, applied when a request's values are bound.
   * Absent: the engine reads BigQuery's zone text as it is.
   */
  bindZone?(zone: string): string;
  /**
   * SQL text with positional parameters `$1…$n`, numbered in the order they first appear;
   * `params[k]` is the query tree's parameter index (1-based) that `$k+1` stands for. Parameters
   * that only parts left out of the SQL use (a stored CTE consumer SQL does not read) are not in it.
   */
  emit(query: Query): EmittedSql;
}

export interface EmittedSql {
  sql: string;
  params: number[];
  /**
   * The same result by a cheaper plan that may give up (`SqlEmitter.readsAheadAtLeadingKey`): its
   * rows carry one more column, `__retry`, and when that is 1 on any row the result is `sql`'s.
   * Same parameters as `sql`.
   */
  readAhead?: string;
  /**
   * The same result in two steps (`SqlEmitter.cutsFirst`): `cut` returns one row and column, a
   * value as text (or NULL); `sql` takes the query's parameters and that value after them.
   * `cut` names only the parameters it reads, its own `$1…` being the query's values at the
   * positions (0-based) `cutValues` lists.
   */
  cutFirst?: CutFirstSql;
}

/** The two steps of `EmittedSql.cutFirst`. */
export interface CutFirstSql {
  /** one row and column: the cut's value as text, or NULL */
  cut: string;
  /** the query's values (0-based positions) `cut`'s own `$1…` are */
  cutValues: number[];
  /** the select, its table read at or past the value bound after the query's own parameters */
  sql: string;
  /**
   * With the value as its `$1`: how many of the table's rows lie at or past it, counted up to one
   * more than `CUT_FIRST_MAX_WINDOW`; beyond that the one-statement `sql` of the query is cheaper.
   */
  window: string;
  /** the engine table `sql` reads at or past the value */
  table: string;
  /**
   * The select's LIMIT. `sql` run with any value at or before the cut (a value from an earlier
   * run, say) returns the same rows whenever it returns this many: rows past that value come
   * before every other row in the select's order.
   */
  limit: number;
}
