import {
  DEFAULT_FUNCTIONS,
  type FunctionEmitter,
  formatTimestampMicros,
  QesError,
  rename,
  type ScalarType,
  SqlEmitter,
  type SqlType,
} from "@qes/core";

const TYPE_NAMES: Record<ScalarType, string> = {
  STRING: "text",
  INT64: "bigint",
  FLOAT64: "double precision",
  BOOL: "boolean",
  TIMESTAMP: "timestamptz",
  DATETIME: "timestamp",
  DATE: "date",
};

const INTERVAL_UNIT: Record<string, string> = {
  MICROSECOND: "1 microsecond",
  MILLISECOND: "1 millisecond",
  SECOND: "1 second",
  MINUTE: "1 minute",
  HOUR: "1 hour",
  DAY: "1 day",
  WEEK: "7 days",
  MONTH: "1 month",
  QUARTER: "3 months",
  YEAR: "1 year",
};

// Text that casts without error; everything else is NULL (SAFE_CAST and DESIGN.md §3's casts).
const INT_TEXT = "'^\\s*[+-]?[0-9]{1,18}\\s*$'";
const FLOAT_TEXT = "'^\\s*[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?\\s*$'";
const TIMESTAMP_TEXT =
  "'^\\s*[0-9]{4}-[0-9]{2}-[0-9]{2}([ Tt][0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]+)?)?)?\\s*(Z|z|UTC|[+-][0-9]{2}(:?[0-9]{2})?)?\\s*$'";

/**
 * PostgreSQL. Sessions may run in any time zone: every TIMESTAMP is built or truncated in UTC
 * explicitly, so results never depend on the server's TimeZone.
 */
export class PostgresDialect extends SqlEmitter {
  readonly name = "postgres";
  readonly functions: Record<string, FunctionEmitter> = {
    ...DEFAULT_FUNCTIONS,
    COUNTIF: ([c]) => `count(*) FILTER (WHERE ${c})`,
    LENGTH: rename("char_length"),
    ENDS_WITH: ([a, b]) => `(right(${a}, char_length(${b})) = ${b})`,
    REGEXP_CONTAINS: ([s, p]) => `(${s} ~ ${p})`,
    TIMESTAMP_TRUNC: ([ts, part], call) =>
      call.args[0]?.type.t === "scalar" && call.args[0].type.s === "TIMESTAMP"
        ? `date_trunc(${part}, ${ts}, 'UTC')`
        : `date_trunc(${part}, ${ts})`,
    DATETIME: (args, call) => {
      const from = call.args[0]?.type;
      if (from?.t === "scalar" && from.s === "TIMESTAMP")
        return `(${args[0]} AT TIME ZONE ${args[1] ?? "'UTC'"})`;
      return `CAST(${args[0]} AS timestamp)`;
    },
    DATE: (args, call) => {
      const from = call.args[0]?.type;
      if (from?.t === "scalar" && from.s === "TIMESTAMP")
        return `CAST(${args[0]} AT TIME ZONE ${args[1] ?? "'UTC'"} AS date)`;
      return `CAST(${args[0]} AS date)`;
    },
    // extract() returns numeric since PostgreSQL 14: exact to the microsecond.
    UNIX_MICROS: ([ts]) => `CAST(extract(epoch FROM ${ts}) * 1000000 AS bigint)`,
    TIMESTAMP_MICROS: ([n]) => `(TIMESTAMPTZ 'epoch' + ${n} * INTERVAL '1 microsecond')`,
    ANY_VALUE: (args, call) =>
      call.type.t === "scalar" && call.type.s === "BOOL" ? `bool_and(${args[0]})` : `min(${args[0]})`,
  };

  typeName(type: ScalarType): string {
    return TYPE_NAMES[type];
  }

  param(index: number, type: SqlType): string {
    const s = type.t === "scalar" ? type.s : "STRING";
    // Bound text is UTC without a zone: read it as such whatever the session's TimeZone.
    if (s === "TIMESTAMP") return `($${index}::timestamp AT TIME ZONE 'UTC')`;
    return `$${index}::${TYPE_NAMES[s]}`;
  }

  timestampLiteral(micros: bigint, type: ScalarType): string {
    const text = this.stringLiteral(formatTimestampMicros(micros));
    if (type === "DATE") return `DATE ${this.stringLiteral(formatTimestampMicros(micros).slice(0, 10))}`;
    if (type === "DATETIME") return `TIMESTAMP ${text}`;
    return `(TIMESTAMP ${text} AT TIME ZONE 'UTC')`;
  }

  jsonExtract(base: string, path: string[], type: SqlType): string {
    const pathLit = this.stringLiteral(
      `{${path.map((p) => `"${p.replace(/["\\]/g, (c) => `\\${c}`)}"`).join(",")}}`,
    );
    if (type.t !== "scalar") return `(${base} #> ${pathLit})`;
    const text = `(${base} #>> ${pathLit})`;
    return type.s === "STRING" ? text : this.safeCast(text, { t: "scalar", s: "STRING" }, type.s);
  }

  safeCast(expr: string, from: SqlType, to: ScalarType): string {
    const fromText = from.t !== "scalar" || from.s === "STRING";
    if (!fromText) return `CAST(${expr} AS ${TYPE_NAMES[to]})`;
    switch (to) {
      case "STRING":
        return expr;
      case "INT64":
        return `CASE WHEN ${expr} ~ ${INT_TEXT} THEN CAST(${expr} AS bigint) END`;
      case "FLOAT64":
        return `CASE WHEN ${expr} ~ ${FLOAT_TEXT} THEN CAST(${expr} AS double precision) END`;
      case "BOOL":
        return `CASE lower(${expr}) WHEN 'true' THEN TRUE WHEN 'false' THEN FALSE END`;
      case "TIMESTAMP":
        return `CASE WHEN ${expr} ~ ${TIMESTAMP_TEXT} THEN CAST(${expr} AS timestamptz) END`;
      case "DATETIME":
        return `CASE WHEN ${expr} ~ ${TIMESTAMP_TEXT} THEN CAST(${expr} AS timestamp) END`;
      case "DATE":
        return `CASE WHEN ${expr} ~ ${TIMESTAMP_TEXT} THEN CAST(${expr} AS date) END`;
    }
  }

  override cast(expr: string, from: SqlType, to: ScalarType): string {
    if (from.t === "scalar" && from.s === "TIMESTAMP" && to === "STRING") {
      return `to_char(${expr} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.USOF')`;
    }
    return `CAST(${expr} AS ${TYPE_NAMES[to]})`;
  }

  unnestFrom(array: string, alias: string, elementType: SqlType): string {
    const value =
      elementType.t === "scalar" && elementType.s !== "STRING"
        ? this.safeCast("e.v", { t: "scalar", s: "STRING" }, elementType.s)
        : "e.v";
    const fn = elementType.t === "scalar" ? "json_array_elements_text" : "json_array_elements";
    const element = elementType.t === "scalar" ? value : "e.v::text";
    return `LATERAL (SELECT ${element} AS value FROM ${fn}(CASE WHEN json_typeof(${array}::json) = 'array' THEN ${array}::json END) AS e(v)) AS ${this.quoteIdent(alias)}`;
  }

  interval(amount: string, unit: string): string {
    const one = INTERVAL_UNIT[unit];
    if (!one) throw new QesError("sql_invalid", `INTERVAL … ${unit} is not supported.`);
    return `(${amount} * INTERVAL '${one}')`;
  }
}

export const postgresDialect = new PostgresDialect();
