import {
  type CallExpr,
  type Expr,
  type FunctionTable,
  type Join,
  lookupFunction,
  type OrderItem,
  QesError,
  type ScalarType,
  type Select,
  type SelectItem,
  SqlEmitter,
  type SqlType,
  scaledFloatSum,
  type WindowSpec,
} from "@qes/core";
import { arraySubquery } from "./clickhouse-array-subquery.ts";
import { bindOnce } from "./clickhouse-bind-once.ts";
import { clickhouseCast, clickhouseSafeCast } from "./clickhouse-casts.ts";
import { correlatedAggregateSubquery } from "./clickhouse-correlated-aggregate.ts";
import { paramName } from "./clickhouse-executor.ts";
import { clickhouseFunctions } from "./clickhouse-functions.ts";
import { jsonStringAt, jsonStringList, readableJson } from "./clickhouse-json-text.ts";
import { nullArrayWhen } from "./clickhouse-null-arrays.ts";
import { scaledRangeFrame } from "./clickhouse-range-frame.ts";
import { quoteIdent, sqlString } from "./clickhouse-sql.ts";
import { filteredBelowSubqueries, holdsSubquery } from "./clickhouse-subquery-select.ts";
import { bindClickhouseZone } from "./clickhouse-time.ts";
import { checkedInt64, nullableType } from "./clickhouse-types.ts";

const INTERVAL_FN: Record<string, string> = {
  MICROSECOND: "toIntervalMicrosecond",
  MILLISECOND: "toIntervalMillisecond",
  SECOND: "toIntervalSecond",
  MINUTE: "toIntervalMinute",
  HOUR: "toIntervalHour",
  DAY: "toIntervalDay",
  WEEK: "toIntervalWeek",
  MONTH: "toIntervalMonth",
  QUARTER: "toIntervalQuarter",
  YEAR: "toIntervalYear",
};

/**
 * ClickHouse. Regular expressions are RE2 natively (`match`, `extract`, `replaceRegexpAll`);
 * parameters are query parameters (`{p1:Nullable(String)}`, cast in the SQL); a real array is
 * expanded with ARRAY JOIN, the engine's lateral join, over an array of named tuples so that
 * `alias.value` and `alias.off` read like any relation's columns.
 */
export class ClickhouseDialect extends SqlEmitter {
  protected override readonly zoneShiftByOffsets = true;
  /** a long value bound by a lambda over a one-element list, written once (bindOnce) */
  /** ClickHouse shares common subexpressions, as DuckDB does (duckdb-dialect.ts): bound past 64 KB */
  override readonly repeatsInlineUpTo: number = 65_536;

  override once(value: string, body: (v: string) => string): string {
    return bindOnce(value, body);
  }

  readonly name = "clickhouse";
  /** reading in sorting-key order stops at the tie-break keys: cut the rows first (measured 4×) */
  override readonly cutsOrderAtLeadingKey = true;
  /**
   * and order the cut rows outside: lazy materialization then reads the metadata JSON text of
   * logs.all for its 100 rows only (needs `query_plan_max_limit_for_lazy_materialization` = 0,
   * CLICKHOUSE_QUERY_SETTINGS)
   */
  override readonly ordersCutRowsOutside = true;
  /** and read the cut's rows from the table, where ClickHouse's top-K filter applies */
  override readonly cutsThroughPlainCte = true;
  /**
   * and, at the top level, first read the newest n+1 rows in one top-K read (its executor retries
   * with the cut form when rows n and n+1 tie): the cut form reads the project twice
   */
  override readonly readsAheadAtLeadingKey = true;
  readonly functions: FunctionTable = clickhouseFunctions(this);

  /**
   * A pattern parameter is bound with RE2's default for `.` made explicit: ClickHouse's `match`
   * lets a dot match a newline. Prefixed once here rather than by a `concat` in the SQL, which
   * ClickHouse evaluated per block (usage.api-counts daily at 1M: 150 ms with it, 113 ms without).
   */
  bindPattern(pattern: string): string {
    return pattern.includes(".") ? `(?-s)${pattern}` : pattern;
  }

  bindZone(zone: string): string {
    return bindClickhouseZone(zone);
  }

  /** ClickHouse reads backslash escapes in string literals: both quotes and backslashes escaped. */
  override quoteIdent(name: string): string {
    return quoteIdent(name);
  }

  override stringLiteral(value: string): string {
    return sqlString(value);
  }

  /** ClickHouse's LIKE escapes with a backslash by default, and has no ESCAPE clause */
  override likeEscape(): string {
    return "";
  }

  /**
   * INT64 `+ - *` and unary minus raise on overflow, as BigQuery's do: computed in Int128 (a
   * product of two INT64 fits) and narrowed back, which costs ~1.5 ns a row; FLOAT64 stays plain.
   */
  protected override operator(op: string, args: Expr[]): string {
    const [a, b] = args;
    // an engine array is never NULL: BigQuery's NULL array is read from what made it
    if ((op === "IS NULL" || op === "IS NOT NULL") && a?.type.t === "array" && a.type.native) {
      const when = nullArrayWhen(this, a) ?? "false";
      return op === "IS NULL" ? `(${when})` : `NOT (${when})`;
    }
    if (op === "NEG" && isInt64(a)) return checkedInt64(`-toInt128(${this.wrap(a!)})`);
    if ((op === "+" || op === "-" || op === "*") && isInt64(a) && isInt64(b))
      return checkedInt64(`toInt128(${this.wrap(a!)}) ${op} ${this.wrap(b!)}`);
    // BigQuery compares an INT64 with a FLOAT64 as FLOAT64s; ClickHouse compares them exactly, so
    // 9007199254740993 = 9007199254740992.0 was false (true on BigQuery, DuckDB and PostgreSQL)
    if (COMPARISONS.has(op) && mixesIntAndFloat(args)) {
      const [x, y] = this.compared(args);
      return `${x} ${op} ${y}`;
    }
    if ((op === "BETWEEN" || op === "NOT BETWEEN") && mixesIntAndFloat(args)) {
      const [x, lo, hi] = this.compared(args);
      return `${x} ${op} ${lo} AND ${hi}`;
    }
    return super.operator(op, args);
  }

  /**
   * Operands compared with one another (a comparison, BETWEEN, IN, CASE x WHEN), each INT64 as a
   * FLOAT64 when any of them is a FLOAT64, as BigQuery compares them (see `operator`).
   */
  private compared(xs: readonly Expr[]): string[] {
    const mixed = mixesIntAndFloat(xs);
    return xs.map((x) => (mixed && isInt64(x) ? `toFloat64(${this.wrap(x)})` : this.wrap(x)));
  }

  private lambdas = 0;

  override joinedElements(
    array: string,
    arrayType: SqlType,
    each: (element: string) => string,
    separator: string,
  ): string {
    const json = readableJson(array);
    const list =
      arrayType.t === "array" && arrayType.native
        ? array
        : arrayType.t === "array"
          ? arrayType.element === "STRING"
            ? jsonStringList(json)
            : `JSONExtract(ifNull(${json}, ''), ${sqlString(`Array(${nullableType(arrayType.element)})`)})`
          : // records read from an event may be one object (FieldNode.objects): an array of one
            `if(JSONType(ifNull(${json}, '')) = 'Object', [ifNull(${json}, '')], JSONExtractArrayRaw(ifNull(${json}, '')))`;
    const v = `__e${this.lambdas++}`;
    return `arrayStringConcat(arrayMap(${v} -> ${each(v)}, ${list}), ${this.stringLiteral(separator)})`;
  }

  override isNaN(x: string): string {
    return `isNaN(${x})`;
  }

  protected override textMatches(text: string, pattern: string): string {
    return `match(${text}, ${this.stringLiteral(pattern)})`;
  }

  /**
   * A RANGE frame whose offset ClickHouse refuses (past 2^31 - 2: `RANGE BETWEEN 3600000000
   * PRECEDING` over unix microseconds, a common dashboard window) runs over its INT64 key halved
   * as many times as brings the offsets within (scaledRangeFrame), as Float64: the same rows.
   */
  protected override windowSpec(w: WindowSpec): string {
    const scaled = w.frame === undefined ? undefined : scaledRangeFrame(w.frame);
    const o = w.orderBy[0];
    if (scaled === undefined || o === undefined) return super.windowSpec(w);
    if (!isInt64(o.expr))
      throw new QesError(
        "sql_invalid",
        "ClickHouse takes a RANGE frame's offset up to 2147483646 over a FLOAT64 key.",
      );
    const key = `toFloat64(${this.ordered(this.key(o.expr), o.expr.type)}) * ${2 ** -scaled.shift}`;
    const nulls = (o.nulls ?? (o.desc ? "last" : "first")).toUpperCase();
    const partition = super.windowSpec({ partitionBy: w.partitionBy, orderBy: [] });
    return [partition, `ORDER BY ${key} ${o.desc ? "DESC" : "ASC"} NULLS ${nulls}`, scaled.frame]
      .filter((part) => part !== "")
      .join(" ");
  }

  /** the sum scaled by 2^-64 and back, which tells its own overflow (scaledFloatSum) */
  override floatSum(x: string, distinct: string, over: string): string {
    return scaledFloatSum(x, distinct, over, this);
  }

  /** ClickHouse's Float64 arithmetic and sum answer ±inf past the range, where BigQuery raises */
  protected override floatOverflowWhen(result: string, operands: string[]): string {
    return [`NOT isFinite(${result})`, ...operands.map((o) => `isFinite(${o})`)].join(" AND ");
  }

  /** throwIf over the block: `value` is read only once the block has no failing row */
  protected override raise(value: string, failWhen: string, message: string): string {
    return `if(throwIf(ifNull(${failWhen}, false), ${this.stringLiteral(message)}) = 0, ${value}, ${value})`;
  }

  /**
   * `1 / 0` raises, as in BigQuery: ClickHouse would answer inf (the divisor plus 0, or the
   * error). `NULL / 0` is NULL: a row whose dividend is NULL divides by 1 instead, as intDiv and
   * modulo compute on the 0 a NULL holds in ClickHouse and raised "Division by zero" on it.
   */
  protected override checkedDivisor(sql: string, dividend: string): string {
    // the condition names the dividend too, or ClickHouse folds the throw of a constant 0 first
    const fails = `ifNull(${sql} = 0, false) AND isNotNull(${dividend})`;
    return `if(isNull(${dividend}), 1, ${sql} + throwIf(${fails}, 'division by zero'))`;
  }

  typeName(type: ScalarType): string {
    return nullableType(type);
  }

  /**
   * an array cannot be NULL here (clickhouse-null-arrays.ts): IF's NULL branch is `[]`, what a
   * result shows for it (nullArrayWhen reads IS NULL from the IF); elsewhere a NULL of the
   * element's type, which coalesce() skips (`[]` would be a value to it)
   */
  override nullArray(element: ScalarType, call: CallExpr): string {
    // if(c, [1], NULL) was a Variant(Array, Int64), which has() and arrayJoin refused
    if (call.fn === "IF") return `CAST([] AS Array(${nullableType(element)}))`;
    return `CAST(NULL AS ${nullableType(element)})`;
  }

  param(index: number, type: SqlType): string {
    const text = `{${paramName(index)}:Nullable(String)}`;
    if (type.t !== "scalar" || type.s === "STRING") return text;
    // integer parameters are bound as normalised decimal text (bind-params.ts)
    if (type.s === "INT64") return `toInt64OrNull(${text})`;
    // timestamps are bound as `YYYY-MM-DD HH:MM:SS.ffffff` in UTC
    if (type.s === "TIMESTAMP" || type.s === "DATETIME") return `toDateTime64OrNull(${text}, 6, 'UTC')`;
    return this.cast(text, { t: "scalar", s: "STRING" }, type.s);
  }

  timestampLiteral(micros: bigint, type: ScalarType): string {
    const ts = `fromUnixTimestamp64Micro(toInt64(${micros}), 'UTC')`;
    return type === "DATE" ? `toDate32(${ts})` : ts;
  }

  override literal(value: string | number | bigint | boolean | null, type: SqlType): string {
    if (value === null) return "NULL";
    // A bare integer literal is UInt8…UInt64 in ClickHouse: arithmetic on it would be unsigned.
    if (type.t === "scalar" && type.s === "INT64" && (typeof value === "number" || typeof value === "bigint"))
      return `toInt64(${value})`;
    if (type.t === "scalar" && type.s === "FLOAT64" && typeof value === "number" && Number.isFinite(value))
      return `toFloat64(${super.literal(value, type)})`;
    return super.literal(value, type);
  }

  jsonExtract(base: string, path: string[], type: SqlType): string {
    const keys = path.map((p) => this.stringLiteral(p)).join(", ");
    const json = readableJson(base);
    const raw = `nullIf(JSONExtractRaw(${json}, ${keys}), '')`;
    // a records field that also met single objects (FieldNode.objects): an object is an array of one
    if (type.t === "records" && type.node.objects)
      return `if(JSONType(${json}, ${keys}) = 'Object', concat('[', ${raw}, ']'), ${raw})`;
    if (type.t !== "scalar") return raw;
    return this.jsonScalar(base, keys, type.s);
  }

  /** A scalar in JSON text at `keys` (already emitted) as `type`; absent or null gives NULL. */
  jsonScalar(base: string, keys: string, type: ScalarType): string {
    const json = readableJson(base);
    const at = keys ? `${json}, ${keys}` : json;
    switch (type) {
      case "STRING":
        return jsonStringAt(at);
      case "INT64":
      case "FLOAT64":
      case "BOOL":
        return `JSONExtract(${at}, ${sqlString(nullableType(type))})`;
      case "TIMESTAMP": {
        // a STRUCT's TIMESTAMP member is written as its unix microseconds (jsonOf), like the wire
        const text = this.safeCast(
          `JSONExtract(${at}, 'Nullable(String)')`,
          { t: "scalar", s: "STRING" },
          type,
        );
        return `if(JSONType(${at}) = 'Int64', fromUnixTimestamp64Micro(JSONExtract(${at}, 'Int64'), 'UTC'), ${text})`;
      }
      default:
        return this.safeCast(`JSONExtract(${at}, 'Nullable(String)')`, { t: "scalar", s: "STRING" }, type);
    }
  }

  safeCast(expr: string, from: SqlType, to: ScalarType): string {
    return clickhouseSafeCast(expr, from, to);
  }

  override cast(expr: string, from: SqlType, to: ScalarType): string {
    return clickhouseCast(expr, from, to);
  }

  /**
   * The array of named tuples `(value, off)` an UNNEST expands: an engine array as it is, JSON
   * text of an array read element by element (scalars typed, records as JSON text).
   */
  unnestTuples(array: string, arrayType: SqlType, elementType: SqlType, withOffset: boolean): string {
    const element = elementType.t === "scalar" ? nullableType(elementType.s) : "Nullable(String)";
    const json = readableJson(array);
    const list =
      arrayType.t === "array" && arrayType.native
        ? array
        : elementType.t === "scalar"
          ? elementType.s === "STRING"
            ? jsonStringList(json)
            : `JSONExtract(ifNull(${json}, ''), ${sqlString(`Array(${element})`)})`
          : `arrayMap(x -> toNullable(x), JSONExtractArrayRaw(ifNull(${json}, '')))`;
    if (!withOffset) return `arrayMap(v -> CAST(tuple(v), ${sqlString(`Tuple(value ${element})`)}), ${list})`;
    return `arrayMap((v, i) -> CAST(tuple(v, i - 1), ${sqlString(`Tuple(value ${element}, off Nullable(Int64))`)}), ${list}, arrayEnumerate(${list}))`;
  }

  unnestFrom(
    array: string,
    alias: string,
    arrayType: SqlType,
    elementType: SqlType,
    withOffset: boolean,
  ): string {
    const u = this.quoteIdent("__u");
    const cols = `${u}.value AS value${withOffset ? `, ${u}.off AS off` : ""}`;
    return `(SELECT ${cols} FROM (SELECT 1) ARRAY JOIN ${this.unnestTuples(array, arrayType, elementType, withOffset)} AS ${u}) AS ${this.quoteIdent(alias)}`;
  }

  /** A join with UNNEST is an ARRAY JOIN (LEFT for LEFT JOIN); its ON condition filters the array. */
  /**
   * An ORDER BY key holding a subquery (the order completed for ties repeats every selected column,
   * a correlated subquery among them) is refused by ClickHouse: "Correlated subqueries in ORDER BY
   * are not supported". The select then runs as a subquery and is ordered outside it, by its
   * columns: the key of a selected expression by that column, any other key as a column of its own.
   */
  protected override selectClauses(given: Select, used: Set<string>): string {
    const s = filteredBelowSubqueries(given);
    if (s.distinct || !s.orderBy.some((o) => holdsSubquery(o.expr))) return super.selectClauses(s, used);
    const byKey = new Map(s.items.map((i) => [this.key(i.expr), i.name]));
    const extra: SelectItem[] = [];
    const order = s.orderBy.map((o, i): OrderItem => {
      let name = byKey.get(this.key(o.expr));
      if (name === undefined) {
        name = `__order${i}`;
        extra.push({ expr: o.expr, name });
      }
      return { ...o, expr: { k: "col", rel: "__o", col: name, type: o.expr.type } };
    });
    const inner: Select = {
      ...s,
      items: [...s.items, ...extra],
      orderBy: [],
      limit: undefined,
      offset: undefined,
    };
    const alias = this.quoteIdent("__o");
    const cols = s.items
      .map((i) => `${alias}.${this.quoteIdent(i.name)} AS ${this.quoteIdent(i.name)}`)
      .join(", ");
    return (
      `SELECT ${cols || "NULL AS _none"}\nFROM (\n${super.selectClauses(inner, used)}\n) AS ${alias}` +
      `\nORDER BY ${order.map((o) => this.orderItem(o)).join(", ")}${this.limitClause(s.limit, s.offset)}`
    );
  }

  protected override joinClause(j: Join, used: Set<string>): string {
    const f = j.item;
    if (f.k !== "unnest") return super.joinClause(j, used);
    if (j.kind === "right" || j.kind === "full")
      throw new QesError(
        "sql_invalid",
        `${j.kind.toUpperCase()} JOIN UNNEST is not supported on ClickHouse.`,
      );
    const alias = this.quoteIdent(f.alias);
    let tuples = this.unnestTuples(this.expr(f.array), f.array.type, f.elementType, f.withOffset);
    if (j.on && !isTrue(j.on)) tuples = `arrayFilter(${alias} -> ${this.expr(j.on)}, ${tuples})`;
    return `${j.kind === "left" ? "LEFT ARRAY JOIN" : "ARRAY JOIN"} ${tuples} AS ${alias}`;
  }

  override expr(e: Expr): string {
    // ClickHouse's IN skips NULLs in the list (`1 IN (2, NULL)` is false, not NULL): a list that is
    // not all non-NULL literals is written as the comparisons it stands for, in three-valued logic.
    if (e.k === "in" && e.list.some((x) => x.k !== "lit" || x.value === null)) {
      const [x, ...items] = this.compared([e.expr, ...e.list]);
      const any = items.map((item) => `${x} = ${item}`).join(" OR ");
      return e.not ? `NOT (${any})` : `(${any})`;
    }
    if (e.k === "in" && mixesIntAndFloat([e.expr, ...e.list])) {
      const [x, ...items] = this.compared([e.expr, ...e.list]);
      return `${x} ${e.not ? "NOT IN" : "IN"} (${items.join(", ")})`;
    }
    // `CASE x WHEN v`: ClickHouse's caseWithExpression finds NULL equal to NULL; BigQuery compares
    // with `=`, where NULL never matches. Written as the comparisons it stands for.
    if (e.k === "case" && e.operand) {
      const [x, ...values] = this.compared([e.operand, ...e.whens.map(([w]) => w)]);
      const whens = e.whens.map(([, t], i) => ` WHEN ${x} = ${values[i]} THEN ${this.expr(t)}`).join("");
      const otherwise = e.else ? ` ELSE ${this.expr(e.else)}` : "";
      return `CASE${whens}${otherwise} END`;
    }
    if (e.k === "subquery") {
      const rewritten =
        arraySubquery(this, e) ?? correlatedAggregateSubquery(this, e, (q) => this.query(q, this.usedCtes));
      if (rewritten !== undefined) return rewritten;
      // ARRAY(SELECT …): the rows' single column gathered into an array, in the subquery's order
      if (e.mode === "array")
        return `arrayMap(t -> t.1, (SELECT groupArray(tuple(*)) FROM (${this.query(e.query, this.usedCtes)})))`;
    }
    // a zone parameter is read as a constant zone (assumeNotNull): when it is NULL, the answer
    // is NULL, as on BigQuery, not the time in the zone '' (UTC)
    if (e.k === "call") {
      const at = lookupFunction(e.fn)?.zoneArg;
      const zone = at === undefined ? undefined : e.args[at];
      if (zone?.k === "param") return `if(isNull(${this.expr(zone)}), NULL, ${super.expr(e)})`;
    }
    return super.expr(e);
  }

  /** LIMIT and OFFSET take a constant non-Nullable number: a bound parameter is one. */
  protected override limitClause(limit?: Expr, offset?: Expr): string {
    const bound = (e: Expr) => (e.k === "lit" ? this.expr(e) : `assumeNotNull(${this.expr(e)})`);
    let sql = "";
    if (limit) sql += `\nLIMIT ${bound(limit)}`;
    if (offset) sql += `\nOFFSET ${bound(offset)}`;
    return sql;
  }

  interval(amount: string, unit: string): string {
    const fn = INTERVAL_FN[unit];
    if (!fn) throw new QesError("sql_invalid", `INTERVAL … ${unit} is not supported.`);
    return `${fn}(${amount})`;
  }
}

function isInt64(e: Expr | undefined): boolean {
  return e?.type.t === "scalar" && e.type.s === "INT64";
}

function isFloat64(e: Expr | undefined): boolean {
  return e?.type.t === "scalar" && e.type.s === "FLOAT64";
}

// IS [NOT] DISTINCT FROM too: ClickHouse's isDistinctFrom refused an Int64 beside a Float64
const COMPARISONS = new Set([
  "=",
  "!=",
  "<>",
  "<",
  ">",
  "<=",
  ">=",
  "IS DISTINCT FROM",
  "IS NOT DISTINCT FROM",
]);

function mixesIntAndFloat(xs: readonly (Expr | undefined)[]): boolean {
  return xs.some(isInt64) && xs.some(isFloat64);
}

function isTrue(e: Expr): boolean {
  return e.k === "lit" && e.value === true;
}

export const clickhouseDialect = new ClickhouseDialect();
