import {
  ADDRESS_PATTERN,
  type CallExpr,
  type CaseFoldOps,
  capturingGroups,
  caseFoldedSql,
  checkedMakeDate,
  checkedMath,
  checkedTimestampFrom,
  DEFAULT_FUNCTIONS,
  dateFormatForTimestamp,
  dateParseFormat,
  datetimeFormat,
  decimalRounding,
  ESCAPE_MARK_CODE_POINT,
  type FormatSpec,
  type FunctionTable,
  formatCall,
  inArraySql,
  type Join,
  JSON_ESCAPE_PATTERN,
  jsonPathKeys,
  literalArg,
  MAX_GENERATED_ELEMENTS,
  mayMatchEmpty,
  microsPer,
  offsetMinutesSql,
  offsetSplit,
  printfHead,
  QesError,
  REDACTED,
  REPLACE_MARKS,
  readingFormat,
  readsInstant,
  rename,
  type ScalarType,
  SqlEmitter,
  type SqlType,
  scaledFloatSum,
  timestampArrayStep,
  truncate,
  truncatesWithinOffset,
  unsetGroupAsNull,
  weekNumberNumerator,
  weekStartDay,
  withoutFraction,
  ZERO_TIMESTAMP_STEP,
} from "@qes/core";
import { duckdbLower, duckdbUpper } from "./duckdb-case-mapping.ts";
import { duckdbFloatText } from "./duckdb-float-text.ts";
import { jsonNumbersAsCore, jsonStringAt, jsonStringList } from "./duckdb-json-text.ts";
import { bindOnce } from "./duckdb-sql.ts";
import { duckdbColumnType, jsonPointer } from "./duckdb-storage.ts";
import {
  bindDuckdbZone,
  floorDivSql,
  formatTimestampSql,
  fromLocalSql,
  stringToTimestampSql,
  toLocalSql,
  truncDivSql,
  zoneName,
  zoneOffsetSql,
} from "./duckdb-time.ts";
import { translateTimeFormat } from "./duckdb-time-format.ts";

// Timestamps are stored naive in UTC (the ICU extension, and so TIMESTAMPTZ arithmetic, is not
// available with external access off); the compiler's types keep TIMESTAMP and DATETIME apart.
const SCALARS: ScalarType[] = ["STRING", "INT64", "FLOAT64", "BOOL", "TIMESTAMP", "DATETIME", "DATE"];
/** SQL type of each scalar: the storage column types (one mapping for DDL and queries). */
const TYPE_NAMES = Object.fromEntries(SCALARS.map((t) => [t, duckdbColumnType(t)])) as Record<
  ScalarType,
  string
>;

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

/**
 * Units whose INT64 amounts pass INTEGER's range within TIMESTAMP's (2^31 µs is 36 minutes): their
 * `to_*` take a BIGINT (or DOUBLE), where a cast to INTEGER refused INTERVAL 3600000000 MICROSECOND.
 * DAY and longer take an INTEGER, which holds every day of the range.
 */
const WIDE_INTERVAL_UNITS = new Set(["MICROSECOND", "MILLISECOND", "SECOND", "MINUTE", "HOUR"]);

/** A JSON array of scalars read from an event as a DuckDB list of `element` (non-conforming values NULL). */
function jsonScalarList(array: string, element: ScalarType): string {
  return element === "STRING"
    ? jsonStringList(array)
    : `TRY_CAST(json_extract_string(${array}, '$[*]') AS ${TYPE_NAMES[element]}[])`;
}

/** DuckDB: RE2 regular expressions and BigQuery-like functions; most rows are renames. */
export class DuckdbDialect extends SqlEmitter {
  /** a long value bound by a lambda over a one-element list, written once (bindOnce) */
  override once(value: string, body: (v: string) => string): string {
    return bindOnce(value, body);
  }

  /**
   * DuckDB shares an expression written twice in one projection (common subexpressions), and not
   * inside a lambda's body: CAST(POW(…) AS STRING) over 2M rows took 23 s with its value bound by
   * a lambda, 7 s written out (47 KB of SQL). So a call is left as written up to 64 KB.
   */
  override readonly repeatsInlineUpTo: number = 65_536;

  readonly name: string = "duckdb";
  /**
   * Newest-100 of a project: the cut lets DuckDB's scan skip all but the newest rows instead of
   * encoding every row's tie-break keys (1M events: 22 ms against 124 ms, native 64 ms) — as long
   * as the CTE it reads a second time stays inlined (`cteAs`).
   */
  override readonly cutsOrderAtLeadingKey: boolean = true;
  /**
   * and, at the top level, the cut's value first: the rows at or past it are then read through the
   * source's time index (duckdb-storage.ts) instead of a second scan (logs.all at 1M: 67 → 34 ms
   * in one process, the index on the same file)
   */
  override readonly cutsFirst: boolean = true;

  /** DuckDB materialises a CTE read twice; a cut's second read must stay a filter in its scan */
  protected override cteAs(name: string): string {
    return this.cutCtes.has(name) ? "AS NOT MATERIALIZED" : "AS";
  }

  // PARSE_TIMESTAMP (and PARSE_DATE's reading): the civil time read is in the zone argument (UTC
  // by default) unless the text's own offset (%z) says otherwise: strptime then returns the
  // instant already
  private readonly parseTimestamp = ([, s, zone]: string[], call: CallExpr): string => {
    const format = readingFormat(literalArg(call, 0, "its format"));
    // an offset is taken out of the text and applied here: strptime's %z reads neither Z nor +HH
    const split = offsetSplit(format);
    const re = split && this.stringLiteral(split.re);
    const civil = split?.civil ?? format;
    // %E*S reads seconds with or without a fraction: strptime tries each format in turn
    const formats = [civil, withoutFraction(civil)]
      .filter((f) => f !== undefined)
      .map((f) => translateTimeFormat(f));
    // strptime refuses a format that starts with whitespace (' %Y', or what stands before an
    // offset at the start), where BigQuery lets padding match any whitespace or none: both the
    // text and the format lose their padding
    const padded = split !== undefined || formats.some((f) => f !== f.trim());
    const civilText = split ? `regexp_replace(${s}, ${re}, ${this.stringLiteral(split.keep)})` : s;
    const text = padded ? `trim(${civilText})` : civilText;
    const literals = formats.map((f) => this.stringLiteral(padded ? f.trim() : f));
    const list = literals.length === 1 ? literals[0] : `[${literals.join(", ")}]`;
    const attempt = `try_strptime(${text}, ${list})`;
    const offset = `regexp_extract(${s}, ${re}, ${split?.offsetGroup})`;
    const value = split ? `(${attempt} - to_minutes(${offsetMinutesSql(offset, "INTEGER")}))` : attempt;
    // text that does not parse is BigQuery's error, not NULL
    const parsed = this.raiseWhen(
      value,
      `(${attempt} IS NULL${split ? ` OR ${offset} = ''` : ""}) AND ${s} IS NOT NULL`,
      `${call.fn}: the text does not match the format`,
    );
    return zone === undefined || readsInstant(format) ? parsed : fromLocalSql(parsed, zoneName(zone));
  };

  readonly functions: FunctionTable = {
    ...DEFAULT_FUNCTIONS,
    // count_if over no rows is NULL in DuckDB; BigQuery's COUNTIF is 0.
    COUNTIF: ([c], call) => `coalesce(CAST(count_if(${c})${this.overOf(call)} AS BIGINT), 0)`,
    ENDS_WITH: rename("ends_with"),
    // BigQuery compares the case-folded texts (case-folding.ts); strlen counts bytes
    CONTAINS_SUBSTR: ([a, b]) => {
      const ops: CaseFoldOps = {
        lower: "lower",
        ascii: (x) => `strlen(${x}) = length(${x})`,
        literal: (s) => this.stringLiteral(s),
        // a list of texts (list_reduce's start must be of the list's type): the pair joined by U+0001
        replaceEach: (x, pairs) =>
          `list_reduce([${pairs.map(([c, f]) => this.stringLiteral(`${c}\u0001${f}`)).join(", ")}], ` +
          `(__cf_acc, __cf_p) -> replace(__cf_acc, split_part(__cf_p, chr(1), 1), split_part(__cf_p, chr(1), 2)), ${x})`,
      };
      return `(strpos(${caseFoldedSql(a!, ops)}, ${caseFoldedSql(b!, ops)}) > 0)`;
    },
    REGEXP_CONTAINS: rename("regexp_matches"),
    DATETIME: (args, call) =>
      isTimestamp(call, 0) ? toLocalSql(args[0]!, zoneName(args[1])) : `CAST(${args[0]} AS TIMESTAMP)`,
    DATE: (args, call) => {
      if (args.length === 3) return checkedMakeDate(args, this, `make_date(${args.join(", ")})`);
      return isTimestamp(call, 0)
        ? `CAST(${toLocalSql(args[0]!, zoneName(args[1]))} AS DATE)`
        : `CAST(${args[0]} AS DATE)`;
    },
    TIMESTAMP: (args, call) => {
      const t = call.args[0]?.type;
      if (t?.t === "scalar" && t.s === "STRING")
        return stringToTimestampSql(args[0]!, zoneName(args[1]), this.inSafeCall);
      if (t?.t === "scalar" && t.s !== "TIMESTAMP")
        return fromLocalSql(`CAST(${args[0]} AS TIMESTAMP)`, zoneName(args[1]));
      return args[0]!;
    },
    TIMESTAMP_TRUNC: ([instant, , zone], call) => {
      if (zone === undefined) return truncate(instant!, call, this);
      const z = zoneName(zone);
      return bindOnce(instant!, (ts) => {
        const local = truncate(toLocalSql(ts, z), call, this);
        // HOUR and MINUTE keep the timestamp's own offset (ZetaSQL TimestampTruncAtLeastMinute):
        // in a repeated hour each occurrence truncates within itself
        if (truncatesWithinOffset(call)) return `(${local} - to_seconds(${zoneOffsetSql(ts, z)}))`;
        return fromLocalSql(local, z);
      });
    },
    UNIX_MICROS: rename("epoch_us"),
    // BigQuery rounds down (toward the past), also before 1970.
    UNIX_MILLIS: ([ts]) => floorDivSql(`epoch_us(${ts})`, 1000),
    UNIX_SECONDS: ([ts]) => floorDivSql(`epoch_us(${ts})`, 1_000_000),
    TIMESTAMP_MICROS: checkedTimestampFrom(1, (n) => `make_timestamp(${n})`),
    // arguments are emitted bare: `TIMESTAMP_MILLIS(a + b)` must not read as `a + b * 1000`
    TIMESTAMP_MILLIS: checkedTimestampFrom(1000, (n) => `make_timestamp((${n}) * 1000)`),
    TIMESTAMP_SECONDS: checkedTimestampFrom(1_000_000, (n) => `make_timestamp((${n}) * 1000000)`),
    TIMESTAMP_DIFF: ([a, b], call) => truncDivSql(`(epoch_us(${a}) - epoch_us(${b}))`, microsPer(call, 2)),
    // BigQuery counts the part's boundaries crossed from b to a; DuckDB's weeks start on Monday
    DATE_DIFF: ([a, b, part], call) => {
      const name = call.args[2]?.k === "datepart" ? call.args[2].part : "";
      if (weekStartDay(name)) {
        const start = (d: string) => truncate(d, { ...call, args: [call.args[0]!, call.args[2]!] }, this);
        return `CAST(date_diff('day', ${start(b!)}, ${start(a!)}) // 7 AS BIGINT)`;
      }
      if (name === "ISOYEAR") return `CAST(isoyear(${a}) - isoyear(${b}) AS BIGINT)`;
      return `date_diff(${part}, ${b}, ${a})`;
    },
    FORMAT_TIMESTAMP: ([, ts, zone], call) =>
      formatTimestampSql(
        literalArg(call, 0, "its format"),
        ts!,
        zone === undefined ? undefined : zoneName(zone),
      ),
    PARSE_TIMESTAMP: (args, call) => this.parseTimestamp(args, call),
    // BigQuery: the date of PARSE_TIMESTAMP in UTC (timestamps are naive UTC here)
    PARSE_DATE: ([f, s], call) => {
      dateParseFormat(literalArg(call, 0, "its format"));
      return `CAST(${this.parseTimestamp([f!, s!], call)} AS DATE)`;
    },
    // DATETIME is a naive TIMESTAMP here: its fields are written as they are
    FORMAT_DATETIME: ([, d], call) =>
      formatTimestampSql(datetimeFormat(literalArg(call, 0, "its format")), d!),
    // BigQuery: FORMAT_TIMESTAMP at midnight UTC, time elements written as their own text
    FORMAT_DATE: ([, d], call) =>
      formatTimestampSql(
        dateFormatForTimestamp(literalArg(call, 0, "its format")),
        `CAST(${d} AS TIMESTAMP)`,
      ),
    // generate_series neither sees interrupts nor counts against the memory limit while it fills
    // one list: a century in microseconds would run on past any timeout. Refuse it first.
    // A step of 0 is BigQuery's own error, checked first (the count took it for 1 µs); a NULL
    // step is no error (greatest() skipped it: the count was the span in µs), its array is NULL.
    GENERATE_TIMESTAMP_ARRAY: ([a, b, step], call) => {
      timestampArrayStep(call);
      const series =
        // a span against the step's direction is an empty array, however long (abs() counted it)
        `CASE WHEN epoch_us(${step}) IS NOT NULL AND sign(epoch_us(${b}) - epoch_us(${a})) * sign(epoch_us(${step})) >= 0 AND abs(epoch_us(${b}) - epoch_us(${a})) // greatest(abs(epoch_us(${step})), 1) > ${MAX_GENERATED_ELEMENTS} ` +
        `THEN error(${this.stringLiteral(`GENERATE_TIMESTAMP_ARRAY would produce more than ${MAX_GENERATED_ELEMENTS} elements`)}) ` +
        `ELSE generate_series(${a}, ${b}, ${step}) END`;
      return this.raiseWhen(series, `epoch_us(${step}) = 0`, ZERO_TIMESTAMP_STEP);
    },
    __EXTRACT: ([, ts], call) => duckdbExtract(call, ts!),
    __QUANTILE: ([x, k, n]) =>
      `list_sort(list(${x}) FILTER (WHERE ${x} IS NOT NULL))[greatest(1, (${k} * count(${x}) + ${n} - 1) // ${n})]`,
    ARRAY_AGG: ([x], call) => {
      const filter = call.agg?.ignoreNulls ? ` FILTER (WHERE ${x} IS NOT NULL)` : "";
      let list = `list(${call.agg?.distinct ? "DISTINCT " : ""}${x}${this.aggregateOrder(call)})${filter}${this.overOf(call)}`;
      const nan = this.distinctNaNOrder(call);
      if (nan) {
        // DuckDB ordered NaN after +inf: BigQuery's place is next to NULL (first ascending, last descending)
        const part = (keep: string) => `list_filter(${list}, __n -> ${keep})`;
        const [nulls, nans, rest] = [part("__n IS NULL"), part("isnan(__n)"), part("NOT isnan(__n)")];
        const values = nan.desc ? `list_concat(${rest}, ${nans})` : `list_concat(${nans}, ${rest})`;
        const nullsFirst = (nan.nulls ?? (nan.desc ? "last" : "first")) === "first";
        list = nullsFirst ? `list_concat(${nulls}, ${values})` : `list_concat(${values}, ${nulls})`;
      }
      return call.agg?.limit === undefined ? list : `list_slice(${list}, 1, ${call.agg.limit})`;
    },
    STRING_AGG: ([x, d], call) => {
      const delim = d ?? "','";
      // LIMIT 0 aggregates no value: NULL, as over no rows (BigQuery), not the empty string
      if (call.agg?.limit === 0) return `CAST(NULL AS ${this.typeName("STRING")})`;
      if (call.agg?.limit === undefined) {
        return `string_agg(${call.agg?.distinct ? "DISTINCT " : ""}${x}, ${delim}${this.aggregateOrder(call)})`;
      }
      // LIMIT counts the values joined: list() keeps the NULLs string_agg skips, so they are
      // filtered first (a NULL ordered first was the one value of LIMIT 1: NULL). A window's OVER
      // goes on list(): DuckDB refused it after array_to_string ("Window function macros must be
      // functions").
      const joined = `array_to_string(list_slice(list(${call.agg?.distinct ? "DISTINCT " : ""}${x}${this.aggregateOrder(call)}) FILTER (WHERE ${x} IS NOT NULL)${this.overOf(call)}, 1, ${call.agg.limit}), ${delim})`;
      // a NULL delimiter makes the result NULL (BigQuery), where array_to_string of one value
      // answered that value
      return d === undefined ? joined : `(CASE WHEN ${delim} IS NULL THEN NULL ELSE ${joined} END)`;
    },
    REGEXP_EXTRACT: ([s, p], call) =>
      `CASE WHEN regexp_matches(${s}, ${p}) THEN ${unsetGroupAsNull(`regexp_extract(${s}, ${p}, ${captureGroup(call)})`, call)} END`,
    REGEXP_REPLACE: ([s, p, r], call) =>
      mayMatchEmpty(call)
        ? replaceBetweenCharacters(this, s!, p!, r!, call)
        : `regexp_replace(${s}, ${p}, ${r}, 'g')`,
    // a NULL delimiter gives NULL (BigQuery), where string_split keeps the text whole
    SPLIT: ([s, d]) =>
      d === undefined
        ? `string_split(${s}, ',')`
        : `CASE WHEN ${d} IS NOT NULL THEN string_split(${s}, ${d}) END`,
    TRIM: (args) => `trim(${args.join(", ")})`,
    ROUND: decimalRounding("round"),
    TRUNC: decimalRounding("trunc"),
    DIV: ([a, b]) =>
      this.raiseWhen(
        `(((${a}) - (${a}) % (${b})) // (${b}))`,
        `(${b}) = 0 AND (${a}) IS NOT NULL`,
        "division by zero",
      ),
    LOG10: checkedMath.log((x) => `log10(${x})`),
    ARRAY_LENGTH: ([a], call) => (isNative(call, 0) ? `len(${a})` : `json_array_length(${a})`),
    UPPER: ([x]) => duckdbUpper(x!, (s) => this.stringLiteral(s)),
    LOWER: ([x]) => duckdbLower(x!, (s) => this.stringLiteral(s)),
    // a NULL delimiter gives NULL (BigQuery); DuckDB joined with ','
    // DuckDB's array_to_string of a list of NULLs only is NULL; BigQuery skips NULLs, so ''
    // elements other than text are joined as CAST(… AS STRING) spells them (`0`, `1e-7`, where
    // DuckDB's own text of a DOUBLE is `0.0`, `1e-07`, and of one read from JSON `1e21`)
    ARRAY_TO_STRING: ([a, d], call) => {
      const type = call.args[0]!.type;
      const element = type.t === "array" ? type.element : "STRING";
      const list = isNative(call, 0) ? a! : jsonScalarList(a!, element);
      const v = `__e${this.lambdas++}`;
      const texts =
        element === "STRING"
          ? list
          : `list_transform(${list}, ${v} -> ${this.cast(v, { t: "scalar", s: element }, "STRING")})`;
      return `CASE WHEN ${d} IS NOT NULL AND ${a} IS NOT NULL THEN coalesce(array_to_string(${texts}, ${d}), '') END`;
    },
    // the JSON text once: each names it many times, so JSON_VALUE of JSON_VALUE multiplied
    JSON_VALUE: ([x], call) => bindOnce(x!, (j) => this.jsonValue(j, call)),
    JSON_EXTRACT_SCALAR: ([x], call) => bindOnce(x!, (j) => this.jsonValue(j, call)),
    JSON_QUERY: ([x], call) => bindOnce(x!, (j) => this.jsonQuery(j, call)),
    JSON_EXTRACT: ([x], call) => bindOnce(x!, (j) => this.jsonQuery(j, call)),
    FORMAT: (args, call) => formatCall(args, call, this, (x, type, s) => this.formatSpec(x, type, s)),
    __ARRAY_AT: ([a, i], call) => this.arrayAt(a!, i!, call),
    __ARRAY_CONTAINS: ([a, x], call) => {
      const t = call.args[0]!.type;
      const list = isNative(call, 0) ? a : jsonScalarList(a!, t.t === "array" ? t.element : "STRING");
      return inArraySql(list!, x!, {
        length: (l) => `len(${l})`,
        contains: (l, v) => `list_contains(${l}, ${v})`,
        holdsNull: (l) => `list_count(${l}) < len(${l})`,
      });
    },
    __ARRAY_TO_JSON: ([a], call) => {
      const t = call.args[0]!.type;
      // TIMESTAMP elements leave as unix microseconds, like every TIMESTAMP on the wire.
      if (t.t === "array" && t.element === "TIMESTAMP")
        return `CAST(to_json(list_transform(${a}, x -> epoch_us(x))) AS VARCHAR)`;
      // JSON has no NaN or infinities (DuckDB writes them bare, which no JSON reader reads): the
      // strings BigQuery's JSON API writes, as a FLOAT64 leaves on the wire
      if (t.t === "array" && t.element === "FLOAT64")
        return `CAST(to_json(list_transform(${a}, x -> CASE WHEN isnan(x) THEN to_json('NaN') WHEN isinf(x) THEN to_json(CASE WHEN x > 0 THEN 'Infinity' ELSE '-Infinity' END) ELSE to_json(x) END)) AS VARCHAR)`;
      return `CAST(to_json(${a}) AS VARCHAR)`;
    },
    __ARRAY: (args, call) => {
      const t = call.type;
      const element = TYPE_NAMES[t.t === "array" ? t.element : "STRING"];
      return args.length ? `[${args.join(", ")}]` : `CAST([] AS ${element}[])`;
    },
    __JSON_OBJECT: (args, call) =>
      `CAST(json_object(${args.map((a, i) => (i % 2 === 1 && isJsonText(call, i) ? `json(${a})` : a)).join(", ")}) AS VARCHAR)`,
    __JSON_ARRAY: (args) => `CAST(json_array(${args.map((a) => `json(${a})`).join(", ")}) AS VARCHAR)`,
    // RE2 reads the address pattern as written; JSON text is redacted as text (its strings hold
    // every address), lists element by element
    __REDACT_ADDRESSES: ([v], call) => {
      const replace = (text: string) =>
        `regexp_replace(${text}, ${this.stringLiteral(ADDRESS_PATTERN)}, ${this.stringLiteral(REDACTED)}, 'g')`;
      if (isNative(call, 0)) return `list_transform(${v}, __s -> ${replace("__s")})`;
      if (!isJsonText(call, 0)) return replace(`CAST(${v} AS VARCHAR)`);
      // JSON text: escapes marked so the pattern meets the decoded text's boundaries (json-text-escapes.ts)
      const mark = `chr(${ESCAPE_MARK_CODE_POINT})`;
      const marked = `regexp_replace(CAST(${v} AS VARCHAR), ${this.stringLiteral(JSON_ESCAPE_PATTERN)}, ${this.stringLiteral("\\1")} || ${mark}, 'g')`;
      return `replace(${replace(marked)}, ${mark}, '')`;
    },
  };

  private formatSpec(x: string, type: SqlType, s: FormatSpec): string {
    // the format is written as a literal like any other text
    const head = printfHead(s);
    const printf = (format: string, arg: string) => `printf(${this.stringLiteral(format)}, ${arg})`;
    switch (s.conversion) {
      case "d":
      case "i":
      case "x":
      case "X":
      case "o":
        return printf(`${head}${s.conversion === "i" ? "d" : s.conversion}`, x);
      case "f":
      case "e":
      case "E":
      case "g":
      case "G":
        return printf(
          `${s.precision === undefined ? `${head}.6` : head}${s.conversion}`,
          `CAST(${x} AS DOUBLE)`,
        );
      default:
        return printf(`${head}s`, this.cast(x, type, "STRING"));
    }
  }

  private lambdas = 0;

  override joinedElements(
    array: string,
    arrayType: SqlType,
    each: (element: string) => string,
    separator: string,
  ): string {
    const list =
      arrayType.t === "array" && arrayType.native
        ? array
        : arrayType.t === "array"
          ? jsonScalarList(array, arrayType.element)
          : // records read from an event may be one object (FieldNode.objects): an array of one
            `CAST(json_extract(CASE WHEN json_type(${array}) = 'OBJECT' THEN json_array(json(${array})) ELSE ${array} END, '$[*]') AS VARCHAR[])`;
    const v = `__e${this.lambdas++}`;
    return `array_to_string(list_transform(${list}, ${v} -> ${each(v)}), ${this.stringLiteral(separator)})`;
  }

  /** DuckDB's NaN equals itself (it sorts above every number) */
  override isNaN(x: string): string {
    return `isnan(${x})`;
  }

  protected override raise(value: string, failWhen: string, message: string): string {
    return `CASE WHEN ${failWhen} THEN error(${this.stringLiteral(message)}) ELSE ${value} END`;
  }

  protected override textMatches(text: string, pattern: string): string {
    return `regexp_matches(${text}, ${this.stringLiteral(pattern)})`;
  }

  /** the sum scaled by 2^-64 and back, which tells its own overflow (scaledFloatSum) */
  override floatSum(x: string, distinct: string, over: string): string {
    return scaledFloatSum(x, distinct, over, this);
  }

  /** DuckDB's DOUBLE arithmetic and sum answer ±inf past the range, where BigQuery raises */
  protected override floatOverflowWhen(result: string, operands: string[]): string {
    return [`NOT isfinite(${result})`, ...operands.map((o) => `isfinite(${o})`)].join(" AND ");
  }

  // DuckDB divides by zero to Infinity or NULL; BigQuery (and PostgreSQL) raise — but not for a
  // NULL dividend, whose quotient is NULL
  protected override checkedDivisor(sql: string, dividend: string): string {
    return `CASE WHEN ${sql} = 0 AND ${dividend} IS NOT NULL THEN error('division by zero') ELSE ${sql} END`;
  }

  override cast(expr: string, from: SqlType, to: ScalarType): string {
    const fromString = from.t === "scalar" && from.s === "STRING";
    // other text is BigQuery's "Bad bool value" (it was NULL, where every other CAST raised)
    if (fromString && to === "BOOL")
      return `CASE lower(${expr}) WHEN 'true' THEN TRUE WHEN 'false' THEN FALSE WHEN ${expr} IS NOT NULL THEN error('Bad bool value: ' || ${expr}) END`;
    if (fromString && to === "INT64") {
      // Decimal and hexadecimal text, as BigQuery reads it; DuckDB alone would round '1.5'.
      // DuckDB alone would also read '1.0' and '1e3', which BigQuery refuses
      return `CASE WHEN regexp_matches(${expr}, '^\\s*[+-]?0[xX][0-9a-fA-F]+\\s*$') THEN (CASE WHEN ltrim(${expr}) LIKE '-%' THEN -1 ELSE 1 END) * CAST(regexp_replace(trim(${expr}), '^[+-]', '') AS BIGINT) WHEN regexp_matches(${expr}, '^\\s*[+-]?[0-9]+\\s*$') THEN CAST(trim(${expr}) AS BIGINT) WHEN ${expr} IS NOT NULL THEN error('Bad int64 value: ' || ${expr}) END`;
    }
    if (from.t === "scalar" && from.s === "TIMESTAMP" && to === "STRING") return timestampText(expr);
    if (from.t === "scalar" && from.s === "DATETIME" && to === "STRING") return datetimeText(expr);
    if (from.t === "scalar" && from.s === "FLOAT64" && to === "STRING") return duckdbFloatText(expr);
    // BigQuery rounds halfway cases away from zero; DuckDB's cast of a DOUBLE rounds them to even
    if (from.t === "scalar" && from.s === "FLOAT64" && to === "INT64")
      return `CAST(round(${expr}) AS BIGINT)`;
    if (fromString && to === "TIMESTAMP") return stringToTimestampSql(expr);
    return `CAST(${expr} AS ${TYPE_NAMES[to]})`;
  }

  private jsonPath(call: CallExpr): string {
    const path = call.args.length > 1 ? literalArg(call, 1, "a JSONPath") : "$";
    const keys = jsonPathKeys(path);
    return this.stringLiteral(
      `$${keys.map((k) => (typeof k === "number" ? `[${k}]` : `."${k.replace(/"/g, '\\"')}"`)).join("")}`,
    );
  }

  /** JSON_VALUE: a scalar at the path as text; objects, arrays and invalid JSON give NULL. */
  private jsonValue(x: string, call: CallExpr): string {
    const p = this.jsonPath(call);
    // a number as CAST(… AS STRING) spells the INT64 or FLOAT64 it is (DESIGN.md §3), as
    // PostgreSQL and ClickHouse do (postgresJsonNumberText): DuckDB rewrote 1e+21 as 1e21, 1E+2
    // as 100.0; one past FLOAT64's range (read as inf) is NULL
    const text = `json_extract_string(${x}, ${p})`;
    const int64 = `TRY_CAST(${text} AS BIGINT)`;
    const double = `CAST(${text} AS DOUBLE)`;
    return (
      `CASE WHEN json_valid(${x}) THEN CASE json_type(${x}, ${p}) WHEN 'OBJECT' THEN NULL WHEN 'ARRAY' THEN NULL ` +
      `WHEN 'BIGINT' THEN CAST(${int64} AS VARCHAR) ` +
      `WHEN 'UBIGINT' THEN coalesce(CAST(${int64} AS VARCHAR), ${duckdbFloatText(double)}) ` +
      `WHEN 'DOUBLE' THEN CASE WHEN NOT isinf(${double}) THEN ${duckdbFloatText(double)} END ` +
      `ELSE ${text} END END`
    );
  }

  private jsonQuery(x: string, call: CallExpr): string {
    const p = this.jsonPath(call);
    return `CASE WHEN json_valid(${x}) THEN ${jsonNumbersAsCore(`CAST(json_extract(${x}, ${p}) AS VARCHAR)`)} END`;
  }

  private arrayAt(a: string, i: string, call: CallExpr): string {
    const t = call.args[0]!.type;
    // an offset past any list's length reads past its end (INT64's largest + 1 raised)
    if (t.t === "array" && t.native) return `CASE WHEN ${i} >= 0 THEN ${a}[least(${i}, 2147483646) + 1] END`;
    const path = `'$[' || CAST(${i} AS VARCHAR) || ']'`;
    if (t.t === "records") return `CASE WHEN ${i} >= 0 THEN CAST(json_extract(${a}, ${path}) AS VARCHAR) END`;
    const element = t.t === "array" ? t.element : "STRING";
    const text = `json_extract_string(${a}, ${path})`;
    return `CASE WHEN ${i} >= 0 THEN ${element === "STRING" ? jsonStringAt(a, path) : `TRY_CAST(${text} AS ${TYPE_NAMES[element]})`} END`;
  }

  /** Zone parameters are bound as zoneOffsetSql reads them (duckdb-time.ts). */
  bindZone(zone: string): string {
    return bindDuckdbZone(zone);
  }

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
    // a JSON Pointer, as storage reads them: `$.""` (a record's empty key, which ingest takes) is
    // refused by DuckDB's JSONPath parser, `/` finds it
    const jsonPath = this.stringLiteral(jsonPointer(path));
    const json = `json_extract(${base}, ${jsonPath})`;
    // a records field that also met single objects (FieldNode.objects): an object is an array of one
    if (type.t === "records" && type.node.objects)
      return `CASE WHEN json_type(${json}) = 'OBJECT' THEN json_array(${json}) ELSE ${json} END`;
    if (type.t !== "scalar") return json;
    const text = `json_extract_string(${base}, ${jsonPath})`;
    return type.s === "STRING" ? jsonStringAt(base, jsonPath) : `TRY_CAST(${text} AS ${TYPE_NAMES[type.s]})`;
  }

  safeCast(expr: string, from: SqlType, to: ScalarType): string {
    const fromString = from.t !== "scalar" || from.s === "STRING";
    if (fromString && to === "INT64") {
      // TRY_CAST of the text itself: the raising cast's CAST would fail on an out-of-range value first
      return `CASE WHEN regexp_matches(${expr}, '^\\s*[+-]?0[xX][0-9a-fA-F]+\\s*$') THEN (CASE WHEN ltrim(${expr}) LIKE '-%' THEN -1 ELSE 1 END) * TRY_CAST(regexp_replace(trim(${expr}), '^[+-]', '') AS BIGINT) WHEN regexp_matches(${expr}, '^\\s*[+-]?[0-9]+\\s*$') THEN TRY_CAST(trim(${expr}) AS BIGINT) END`;
    }
    if (fromString && to === "BOOL")
      return `CASE lower(${expr}) WHEN 'true' THEN TRUE WHEN 'false' THEN FALSE END`;
    if (from.t === "scalar" && from.s === "TIMESTAMP" && to === "STRING") return timestampText(expr);
    if (from.t === "scalar" && from.s === "DATETIME" && to === "STRING") return datetimeText(expr);
    if (fromString && to === "TIMESTAMP") return stringToTimestampSql(expr, "UTC", true);
    if (from.t === "scalar" && from.s === "FLOAT64" && to === "INT64")
      return `TRY_CAST(round(${expr}) AS BIGINT)`;
    // from any other non-text type a conversion cannot fail: SAFE_CAST is CAST, with its text of
    // a FLOAT64 (TRY_CAST wrote 1.0 as '1.0', BigQuery's is '1')
    if (!fromString) return this.cast(expr, from, to);
    return `TRY_CAST(${expr} AS ${TYPE_NAMES[to]})`;
  }

  unnestFrom(
    array: string,
    alias: string,
    arrayType: SqlType,
    elementType: SqlType,
    withOffset: boolean,
  ): string {
    // Projection form, not a lateral join: ~280× faster on DuckDB (NOTES.md).
    return unnestOfList(this.unnestList(array, arrayType, elementType), alias, withOffset, this);
  }

  /**
   * UNNEST joined to the rows before it: the list in a lateral item of its own, then unnested
   * from that column. DuckDB turns a correlated `(SELECT unnest(<column>))` into a plain UNNEST
   * (its UnnestRewriter), but decorrelates `unnest(<expression>)` by a join on the outer columns
   * the expression reads: each of an array's n rows carried the whole JSON text the array came
   * from, memory n × that text (one event of 20,000 items took 3 GB and failed; now 20 MB).
   */
  protected override joinClause(j: Join, used: Set<string>): string {
    const f = j.item;
    if (f.k !== "unnest") return super.joinClause(j, used);
    const holder = this.quoteIdent(`${f.alias}_list`);
    const list = this.unnestList(this.expr(f.array), f.array.type, f.elementType);
    const kw = j.kind === "cross" ? "CROSS JOIN" : `${j.kind.toUpperCase()} JOIN`;
    const on = j.on ? ` ON ${this.expr(j.on)}` : "";
    return (
      `CROSS JOIN (SELECT ${list} AS l) AS ${holder}\n` +
      `${kw} ${unnestOfList(`${holder}.l`, f.alias, f.withOffset, this)}${on}`
    );
  }

  /** the engine list an UNNEST expands: JSON text of an array as a list of its elements */
  private unnestList(array: string, arrayType: SqlType, elementType: SqlType): string {
    if (arrayType.t === "array" && arrayType.native) return array;
    return elementType.t === "scalar"
      ? jsonScalarList(array, elementType.s)
      : `CAST(json_extract(${array}, '$[*]') AS VARCHAR[])`;
  }

  interval(amount: string, unit: string): string {
    const fn = INTERVAL_FN[unit];
    if (!fn) throw new QesError("sql_invalid", `INTERVAL … ${unit} is not supported.`);
    return `${fn}(CAST(${amount} AS ${WIDE_INTERVAL_UNITS.has(unit) ? "BIGINT" : "INTEGER"}))`;
  }
}

/** A FROM item of `list`'s elements as `value` (and their 0-based positions as `off`). */
function unnestOfList(list: string, alias: string, withOffset: boolean, emitter: SqlEmitter): string {
  const offset = withOffset ? `, unnest(range(0, len(${list}))) AS off` : "";
  return `(SELECT unnest(${list}) AS value${offset}) AS ${emitter.quoteIdent(alias)}`;
}

/**
 * REGEXP_REPLACE of a pattern that may match the empty string (mayMatchEmpty), its replacements
 * between characters only, as PostgreSQL's and ClickHouse's are. DuckDB's RE2 search tries every
 * byte, so an empty match it finds ahead (`\B` between the two bytes of `é`: `('aé', r'\B', '-')`
 * gave `a\xC3-\xA9-` where the others give `aé-`) tore a character. Each replacement is marked
 * (REPLACE_MARKS' START before it, END after it); one whose END is followed by a UTF-8
 * continuation byte (10xxxxxx, first hex digit 8 to B, which follows no whole character) was
 * inside a character and is taken out, the character whole again, and the marks go. A text or
 * replacement that holds a mark is replaced as it is.
 */
function replaceBetweenCharacters(e: SqlEmitter, s: string, p: string, r: string, call: CallExpr): string {
  const { START, END } = REPLACE_MARKS;
  const lit = (text: string) => e.stringLiteral(text);
  const plain = `regexp_replace(${s}, ${p}, ${r}, 'g')`;
  const marked = `regexp_replace(${s}, ${p}, ${lit(START)} || ${r} || ${lit(END)}, 'g')`;
  const untorn = e.once(`string_split(${marked}, ${lit(START)})`, (pieces) => {
    // each piece after the first: the replacement, END, and the text up to the next replacement
    const rest = `string_split(__rb_p, ${lit(END)})[2]`;
    const piece = `CASE WHEN left(hex(${rest}), 1) IN ('8', '9', 'A', 'B') THEN ${rest} ELSE replace(__rb_p, ${lit(END)}, '') END`;
    return `${pieces}[1] || array_to_string(list_transform(${pieces}[2:], __rb_p -> ${piece}), '')`;
  });
  const holds = (x: string) => `contains(${x}, ${lit(START)}) OR contains(${x}, ${lit(END)})`;
  const holdsMarks = call.args[2]?.k === "lit" ? holds(s) : `${holds(s)} OR ${holds(r)}`;
  return `CASE WHEN ${holdsMarks} THEN ${plain} ELSE ${untorn} END`;
}

/** Arguments that hold JSON text (records), embedded as JSON rather than as strings. */
function isJsonText(call: CallExpr, i: number): boolean {
  const t = call.args[i]?.type;
  return t?.t === "record" || t?.t === "records" || (t?.t === "array" && !t.native);
}

/** BigQuery's text of a TIMESTAMP: UTC, 0, 3 or 6 fractional digits, suffix +00. */
function timestampText(ts: string): string {
  const us = `(epoch_us(${ts}) % 1000000 + 1000000) % 1000000`;
  return `(strftime(${ts}, '%Y-%m-%d %H:%M:%S') || CASE WHEN ${us} = 0 THEN '' WHEN ${us} % 1000 = 0 THEN '.' || lpad(CAST(${us} // 1000 AS VARCHAR), 3, '0') ELSE '.' || lpad(CAST(${us} AS VARCHAR), 6, '0') END || '+00')`;
}

/**
 * BigQuery's text of a DATETIME: no zone, six fractional digits only when there is a fraction, as
 * PostgreSQL and ClickHouse write it (DuckDB's own cast drops trailing zeros: `.0001`).
 */
function datetimeText(dt: string): string {
  const us = `(epoch_us(${dt}) % 1000000 + 1000000) % 1000000`;
  return `(strftime(${dt}, '%Y-%m-%d %H:%M:%S') || CASE WHEN ${us} = 0 THEN '' ELSE '.' || lpad(CAST(${us} AS VARCHAR), 6, '0') END)`;
}

function isTimestamp(call: CallExpr, i: number): boolean {
  const t = call.args[i]?.type;
  return t?.t === "scalar" && t.s === "TIMESTAMP";
}

function isNative(call: CallExpr, i: number): boolean {
  const t = call.args[i]?.type;
  return t?.t === "array" && t.native === true;
}

/**
 * REGEXP_EXTRACT returns the first capturing group when the pattern has one, else the match
 * (a `(` inside a class, `[(]`, is no group: DuckDB read group 1 of such a pattern as '').
 */
function captureGroup(call: CallExpr): number {
  const p = call.args[1];
  if (p?.k !== "lit" || typeof p.value !== "string") return 0;
  return capturingGroups(p.value) > 0 ? 1 : 0;
}

function duckdbExtract(call: CallExpr, ts: string): string {
  const part = call.args[0]?.k === "datepart" ? call.args[0].part : "";
  switch (part) {
    case "DATE":
      return `CAST(${ts} AS DATE)`;
    case "DAYOFWEEK":
      return `(dayofweek(${ts}) + 1)`;
    case "DAYOFYEAR":
      return `dayofyear(${ts})`;
    case "ISOWEEK":
      return `weekofyear(${ts})`;
    case "ISOYEAR":
      return `isoyear(${ts})`;
    case "WEEK":
      return `CAST(${weekNumberNumerator(`dayofyear(${ts})`, `dayofweek(${ts})`, part)} // 7 AS BIGINT)`;
    case "MICROSECOND":
      return `(microsecond(${ts}) % 1000000)`;
    case "MILLISECOND":
      return `(millisecond(${ts}) % 1000)`;
    default:
      if (part.startsWith("WEEK("))
        return `CAST(${weekNumberNumerator(`dayofyear(${ts})`, `dayofweek(${ts})`, part)} // 7 AS BIGINT)`;
      return `CAST(extract(${part.toLowerCase()} FROM ${ts}) AS BIGINT)`;
  }
}

export const duckdbDialect = new DuckdbDialect();
