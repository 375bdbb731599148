import {
  DEFAULT_FUNCTIONS,
  type FunctionEmitter,
  QesError,
  rename,
  type ScalarType,
  SqlEmitter,
  type SqlType,
} from "@qes/core";

const TYPE_NAMES: Record<ScalarType, string> = {
  STRING: "VARCHAR",
  INT64: "BIGINT",
  FLOAT64: "DOUBLE",
  BOOL: "BOOLEAN",
  // Timestamps are stored naive in UTC (the ICU extension, and so TIMESTAMPTZ arithmetic, is not
  // available with external access off); the compiler's types keep TIMESTAMP and DATETIME apart.
  TIMESTAMP: "TIMESTAMP",
  DATETIME: "TIMESTAMP",
  DATE: "DATE",
};

const INTERVAL_FN: Record<string, string> = {
  MICROSECOND: "to_microseconds",
  MILLISECOND: "to_milliseconds",
  SECOND: "to_seconds",
  MINUTE: "to_minutes",
  HOUR: "to_hours",
  DAY: "to_days",
  WEEK: "to_weeks",
  MONTH: "to_months",
  QUARTER: "to_quarters",
  YEAR: "to_years",
};

/** DuckDB: RE2 regular expressions and BigQuery-like functions; most rows are renames. */
export class DuckdbDialect extends SqlEmitter {
  readonly name = "duckdb";
  readonly functions: Record<string, FunctionEmitter> = {
    ...DEFAULT_FUNCTIONS,
    COUNTIF: ([c]) => `CAST(count_if(${c}) AS BIGINT)`,
    ENDS_WITH: rename("ends_with"),
    REGEXP_CONTAINS: rename("regexp_matches"),
    // Stored timestamps are UTC already; other zones need ICU, which this build cannot load.
    DATETIME: (args, call) => {
      const zone = call.args[1];
      if (
        zone &&
        !(
          zone.k === "lit" &&
          typeof zone.value === "string" &&
          /^(UTC|Etc\/UTC|\+00(:00)?|Z)$/i.test(zone.value)
        )
      ) {
        throw new QesError("sql_invalid", "DATETIME(…, zone) supports only 'UTC' on the DuckDB backend.");
      }
      return `CAST(${args[0]} AS TIMESTAMP)`;
    },
    DATE: ([a]) => `CAST(${a} AS DATE)`,
    UNIX_MICROS: rename("epoch_us"),
    TIMESTAMP_MICROS: rename("make_timestamp"),
  };

  typeName(type: ScalarType): string {
    return TYPE_NAMES[type];
  }

  param(index: number, type: SqlType): string {
    return type.t === "scalar" && type.s !== "STRING"
      ? `CAST($${index} AS ${TYPE_NAMES[type.s]})`
      : `CAST($${index} AS VARCHAR)`;
  }

  timestampLiteral(micros: bigint, type: ScalarType): string {
    return `make_timestamp(${micros}::BIGINT)${type === "DATE" ? "::DATE" : ""}`;
  }

  jsonExtract(base: string, path: string[], type: SqlType): string {
    const jsonPath = this.stringLiteral(`$${path.map((p) => `."${p.replace(/"/g, '\\"')}"`).join("")}`);
    if (type.t !== "scalar") return `json_extract(${base}, ${jsonPath})`;
    const text = `json_extract_string(${base}, ${jsonPath})`;
    return type.s === "STRING" ? text : `TRY_CAST(${text} AS ${TYPE_NAMES[type.s]})`;
  }

  safeCast(expr: string, _from: SqlType, to: ScalarType): string {
    return `TRY_CAST(${expr} AS ${TYPE_NAMES[to]})`;
  }

  unnestFrom(array: string, alias: string, elementType: SqlType): string {
    const elements =
      elementType.t === "scalar"
        ? `unnest(CAST(json_extract(${array}, '$[*]') AS ${TYPE_NAMES[elementType.s]}[]))`
        : `unnest(CAST(json_extract(${array}, '$[*]') AS VARCHAR[]))`;
    return `(SELECT ${elements} AS value) AS ${this.quoteIdent(alias)}`;
  }

  interval(amount: string, unit: string): string {
    const fn = INTERVAL_FN[unit];
    if (!fn) throw new QesError("sql_invalid", `INTERVAL … ${unit} is not supported.`);
    return `${fn}(CAST(${amount} AS INTEGER))`;
  }
}

export const duckdbDialect = new DuckdbDialect();
