import { requireOrderable } from "../compile/groupable.ts";
import type { Expr } from "../compile/ir.ts";
import {
  BOOL,
  commonType,
  DATE,
  DATETIME,
  FLOAT64,
  INT64,
  isNumeric,
  type SqlType,
  STRING,
  TIMESTAMP,
  typeName,
} from "../compile/sql-type.ts";
import { QesError } from "../errors.ts";
import type { ScalarType } from "../schema/schema-model.ts";
import { parsedFromEpoch } from "./parse-time-args.ts";

/**
 * The BigQuery functions the compiler knows (DESIGN.md §5). Only these are callable: engine
 * functions that touch files, network, settings or catalogs are unreachable because they are not
 * here. Each entry types its call; each dialect has a table that emits it.
 */
export interface FunctionSpec<N extends string = string> {
  name: N;
  kind: "scalar" | "aggregate" | "window";
  minArgs: number;
  maxArgs: number;
  /** what string literals in each position are coerced to (BigQuery's literal coercion) */
  literalAs?: (ScalarType | undefined)[];
  /** arguments that are date parts (`HOUR` in TIMESTAMP_TRUNC) */
  datePartArgs?: number[];
  /** argument positions that are regular-expression patterns */
  patternArgs?: number[];
  /**
   * BigQuery's extraction functions refuse a pattern with more than one capturing group (they
   * return that group, or the whole match): the most a literal pattern argument may have
   */
  maxCapturingGroups?: number;
  /**
   * the argument position of a time zone (when given as a STRING): a literal or a parameter, as
   * ClickHouse's time functions need a constant zone (DESIGN.md §3)
   */
  zoneArg?: number;
  /**
   * argument positions whose text the dialects read when they compile (a format, a JSONPath): a
   * string literal. A NULL there, as a zone that is NULL, makes the call NULL, as BigQuery's
   * (`nullTextArgs` in analyze-functions.ts)
   */
  literalArgs?: number[];
  /**
   * argument positions that must be a literal or a parameter (a delimiter, the characters to
   * trim): ClickHouse and DuckDB take only constants there, so every backend refuses the rest
   */
  constantArgs?: number[];
  /**
   * argument positions whose value is the result (IF's branches, COALESCE's alternatives): they
   * meet in the result's type, so an INT64 one is widened where the result is FLOAT64
   */
  resultArgs?: "all" | number[];
  /** where qes deliberately differs from BigQuery (DESIGN.md §3), as docs/functions.md says it */
  departure?: string;
  /** the scalar types accepted at checked positions (signatures.ts derives signatures from them) */
  accepts?: ReadonlyArray<readonly [number, ...ScalarType[]]>;
  returns: (args: SqlType[], name: string) => SqlType;
  /** the analysed arguments as every dialect is to get them (BigQuery's defaults made explicit) */
  rewriteArgs?: (args: Expr[]) => Expr[];
}

const CONSTANT_DEPARTURE = (what: string) =>
  `${what} is a string literal or a parameter; BigQuery also takes one computed per row, which ClickHouse (and DuckDB for STRING_AGG) cannot.`;

const ZONE_DEPARTURE =
  "the time zone is a string literal or a parameter; BigQuery also takes one read from a column, which ClickHouse's time functions (constant zones only) cannot.";

const sameAsFirst = (args: SqlType[]) => args[0] ?? STRING;
/** MIN, MAX: an orderable argument (no STRUCT, no ARRAY), whose type is the result */
const orderedFirst = (args: SqlType[], name: string) => {
  requireOrderable(args[0] ?? STRING, `${name}`);
  return sameAsFirst(args);
};

/**
 * CONCAT (and `||`): values that have a text, scalars. A STRUCT or an ARRAY has none every engine
 * writes alike: a STRUCT went in as each engine's own JSON text of it (`{"a" : 1}` on PostgreSQL,
 * `{"a":"1"}` on ClickHouse), an ARRAY failed in DuckDB and PostgreSQL and was text in ClickHouse.
 */
const concatenated = (args: SqlType[], name: string): SqlType => {
  for (const [i, a] of args.entries()) {
    if (a.t !== "scalar" && a.t !== "null")
      throw new QesError(
        "sql_invalid",
        `No matching signature for function ${name}: argument ${i + 1} is ${typeName(a)}, expected STRING.`,
      );
  }
  return STRING;
};

function expectArg(name: string, args: SqlType[], i: number, ...accepted: ScalarType[]): void {
  const a = args[i];
  if (!a || a.t === "null") return;
  if (a.t === "scalar" && accepted.includes(a.s)) return;
  if (a.t === "scalar" && accepted.includes("FLOAT64") && a.s === "INT64") return;
  throw new QesError(
    "sql_invalid",
    `No matching signature for function ${name}: argument ${i + 1} is ${typeName(a)}, expected ${accepted.join(" or ")}.`,
  );
}

/** A typing rule that first checks argument positions against accepted scalar types. */
function checked(
  accepts: Array<[number, ...ScalarType[]]>,
  result: (args: SqlType[], name: string) => SqlType,
): (args: SqlType[], name: string) => SqlType {
  return (args, name) => {
    for (const [i, ...types] of accepts) expectArg(name, args, i, ...types);
    return result(args, name);
  };
}

function common(name: string, args: SqlType[]): SqlType {
  let t: SqlType = { t: "null" };
  for (const a of args) {
    const c = commonType(t, a);
    if (!c)
      throw new QesError(
        "sql_invalid",
        `No common type for the arguments of ${name}: ${args.map(typeName).join(", ")}.`,
      );
    t = c;
  }
  return t;
}

/** GREATEST, LEAST: values of an orderable type */
function ordered(name: string, type: SqlType): SqlType {
  requireOrderable(type, name);
  return type;
}

const NUM: ScalarType[] = ["INT64", "FLOAT64"];
/** the first two (three) arguments are STRING: the commonest signature of string functions */
const STRINGS2: Array<[number, ...ScalarType[]]> = [
  [0, "STRING"],
  [1, "STRING"],
];
const STRINGS3: Array<[number, ...ScalarType[]]> = [...STRINGS2, [2, "STRING"]];
/** two numbers (SAFE_DIVIDE, POW); a number and a count of digits (ROUND, TRUNC); two INT64 (DIV, MOD) */
const NUMBERS2: Array<[number, ...ScalarType[]]> = [
  [0, ...NUM],
  [1, ...NUM],
];
const NUMBER_AND_DIGITS: Array<[number, ...ScalarType[]]> = [
  [0, ...NUM],
  [1, "INT64"],
];
/** a string, then a position and a length (SUBSTR, SUBSTRING) */
const STRING_AND_POSITIONS: Array<[number, ...ScalarType[]]> = [
  [0, "STRING"],
  [1, "INT64"],
  [2, "INT64"],
];
const INTEGERS2: Array<[number, ...ScalarType[]]> = [
  [0, "INT64"],
  [1, "INT64"],
];
const TIME: ScalarType[] = ["TIMESTAMP"];
const nativeArray = (element: ScalarType): SqlType => ({ t: "array", element, native: true });
const elementOf = (t: SqlType | undefined): SqlType =>
  t?.t === "array" ? { t: "scalar", s: t.element } : { t: "null" };
const numericResult = (a: SqlType[]) =>
  a.every((x) => x.t === "null" || (x.t === "scalar" && x.s === "INT64")) ? INT64 : FLOAT64;

const specs = [
  // aggregates
  fn("COUNT", "aggregate", [0, 1], [], INT64),
  fn("COUNTIF", "aggregate", [1, 1], [[0, "BOOL"]], INT64),
  fn("SUM", "aggregate", [1, 1], [[0, ...NUM]], (a) => numericResult(a.slice(0, 1))),
  fn("AVG", "aggregate", [1, 1], [[0, ...NUM]], FLOAT64),
  fn("MIN", "aggregate", [1, 1], [], orderedFirst),
  fn("MAX", "aggregate", [1, 1], [], orderedFirst),
  fn("ANY_VALUE", "aggregate", [1, 1], [], sameAsFirst, {
    departure: "BigQuery leaves the choice open; every backend takes the minimum.",
  }),
  fn("LOGICAL_OR", "aggregate", [1, 1], [[0, "BOOL"]], BOOL),
  fn("LOGICAL_AND", "aggregate", [1, 1], [[0, "BOOL"]], BOOL),
  // conditionals
  fn("COALESCE", "scalar", [1, 100], [], (a, n) => common(n, a), { resultArgs: "all" }),
  fn("IFNULL", "scalar", [2, 2], [], (a, n) => common(n, a), { resultArgs: "all" }),
  // the supertype of both (BigQuery's NULLIF): NULLIF(NULL, 'x') is a STRING, where the first
  // argument's type made it an INT64 that DuckDB could not coalesce with text
  fn("NULLIF", "scalar", [2, 2], [], (a, n) => common(n, a), { resultArgs: "all" }),
  fn("IF", "scalar", [3, 3], [[0, "BOOL"]], (a, n) => common(n, a.slice(1)), { resultArgs: [1, 2] }),
  // strings
  fn("LOWER", "scalar", [1, 1], [[0, "STRING"]], STRING),
  fn("UPPER", "scalar", [1, 1], [[0, "STRING"]], STRING),
  fn("LENGTH", "scalar", [1, 1], [[0, "STRING"]], INT64),
  fn("STARTS_WITH", "scalar", [2, 2], STRINGS2, BOOL),
  fn("ENDS_WITH", "scalar", [2, 2], STRINGS2, BOOL),
  fn("CONCAT", "scalar", [1, 100], [], concatenated),
  fn("REGEXP_CONTAINS", "scalar", [2, 2], STRINGS2, BOOL, { patternArgs: [1] }),
  // time
  fn("CURRENT_TIMESTAMP", "scalar", [0, 0], [], TIMESTAMP),
  fn("TIMESTAMP_TRUNC", "scalar", [2, 3], [[0, ...TIME]], TIMESTAMP, {
    literalAs: ["TIMESTAMP"],
    datePartArgs: [1],
    zoneArg: 2,
    departure: ZONE_DEPARTURE,
  }),
  fn("TIMESTAMP_SUB", "scalar", [2, 2], [[0, ...TIME]], TIMESTAMP, { literalAs: ["TIMESTAMP"] }),
  fn("TIMESTAMP_ADD", "scalar", [2, 2], [[0, ...TIME]], TIMESTAMP, { literalAs: ["TIMESTAMP"] }),
  fn("DATETIME", "scalar", [1, 2], [[0, "TIMESTAMP", "DATETIME", "DATE"]], DATETIME, {
    literalAs: ["TIMESTAMP", "STRING"],
    zoneArg: 1,
    departure: ZONE_DEPARTURE,
  }),
  fn(
    "DATE",
    "scalar",
    [1, 3],
    [],
    (a, n) =>
      a.length === 3
        ? checked(
            [
              [0, "INT64"],
              [1, "INT64"],
              [2, "INT64"],
            ],
            () => DATE,
          )(a, n)
        : checked(
            [
              [0, "TIMESTAMP", "DATETIME", "DATE"],
              [1, "STRING"],
            ],
            () => DATE,
          )(a, n),
    { literalAs: ["TIMESTAMP", "STRING"], zoneArg: 1, departure: ZONE_DEPARTURE },
  ),
  fn("UNIX_MICROS", "scalar", [1, 1], [[0, ...TIME]], INT64, { literalAs: ["TIMESTAMP"] }),
  fn("TIMESTAMP_MICROS", "scalar", [1, 1], [[0, "INT64"]], TIMESTAMP),
  ...moreFunctions(),
] as const;

/** Compact rows: name, kind, arity, accepted argument types, result. */
function fn<const N extends string>(
  name: N,
  kind: FunctionSpec["kind"],
  arity: [number, number],
  accepts: Array<[number, ...ScalarType[]]>,
  result: SqlType | ((args: SqlType[], name: string) => SqlType),
  extra: Partial<Omit<FunctionSpec, "name">> = {},
): FunctionSpec<N> {
  return {
    name,
    kind,
    minArgs: arity[0],
    maxArgs: arity[1],
    accepts,
    returns: checked(accepts, typeof result === "function" ? result : () => result),
    ...extra,
  };
}

function moreFunctions() {
  return [
    // aggregates
    fn("APPROX_COUNT_DISTINCT", "aggregate", [1, 1], [], INT64, {
      departure: "exact: the number of distinct non-NULL values.",
    }),
    // n+1 exact quantiles (DESIGN.md §3); n must be an integer literal (special-forms.ts)
    fn(
      "APPROX_QUANTILES",
      "aggregate",
      [2, 2],
      [[1, "INT64"]],
      (a) => nativeArray(a[0]?.t === "scalar" ? a[0].s : "INT64"),
      {
        departure:
          "exact: quantile k of n over c non-NULL values is the value at rank max(1, ceil(k·c/n)) (percentile_disc); n is an integer literal from 1 to 1000.",
      },
    ),
    fn("ARRAY_AGG", "aggregate", [1, 1], [], (a) => nativeArray(a[0]?.t === "scalar" ? a[0].s : "STRING"), {
      departure: "without ORDER BY the elements are ordered by value (BigQuery leaves the order open).",
    }),
    fn("STRING_AGG", "aggregate", [1, 2], STRINGS2, STRING, {
      departure: `without ORDER BY the values are joined in value order (BigQuery leaves the order open); ${CONSTANT_DEPARTURE("the delimiter")}`,
      constantArgs: [1],
    }),
    // window functions
    fn("ROW_NUMBER", "window", [0, 0], [], INT64),
    fn("RANK", "window", [0, 0], [], INT64),
    fn("DENSE_RANK", "window", [0, 0], [], INT64),
    fn("PERCENT_RANK", "window", [0, 0], [], FLOAT64),
    fn("CUME_DIST", "window", [0, 0], [], FLOAT64),
    fn("NTILE", "window", [1, 1], [[0, "INT64"]], INT64),
    fn("LAG", "window", [1, 3], [[1, "INT64"]], (a, n) => common(n, [a[0]!, a[2] ?? { t: "null" }]), {
      resultArgs: [0, 2],
    }),
    fn("LEAD", "window", [1, 3], [[1, "INT64"]], (a, n) => common(n, [a[0]!, a[2] ?? { t: "null" }]), {
      resultArgs: [0, 2],
    }),
    fn("FIRST_VALUE", "window", [1, 1], [], sameAsFirst),
    fn("LAST_VALUE", "window", [1, 1], [], sameAsFirst),
    // BigQuery's row number is a constant_integer_expression too
    fn("NTH_VALUE", "window", [2, 2], [[1, "INT64"]], sameAsFirst, { constantArgs: [1] }),
    // strings
    fn("REGEXP_EXTRACT", "scalar", [2, 2], STRINGS2, STRING, { patternArgs: [1], maxCapturingGroups: 1 }),
    fn("REGEXP_REPLACE", "scalar", [3, 3], STRINGS3, STRING, { patternArgs: [1] }),
    fn("CONTAINS_SUBSTR", "scalar", [2, 2], STRINGS2, BOOL),
    fn("SUBSTR", "scalar", [2, 3], STRING_AND_POSITIONS, STRING),
    fn("SUBSTRING", "scalar", [2, 3], STRING_AND_POSITIONS, STRING),
    fn("SPLIT", "scalar", [1, 2], STRINGS2, nativeArray("STRING"), {
      constantArgs: [1],
      departure: CONSTANT_DEPARTURE("the delimiter"),
    }),
    fn("TRIM", "scalar", [1, 2], STRINGS2, STRING, {
      constantArgs: [1],
      departure: CONSTANT_DEPARTURE("the set of characters to trim"),
    }),
    fn("LTRIM", "scalar", [1, 2], STRINGS2, STRING, {
      constantArgs: [1],
      departure: CONSTANT_DEPARTURE("the set of characters to trim"),
    }),
    fn("RTRIM", "scalar", [1, 2], STRINGS2, STRING, {
      constantArgs: [1],
      departure: CONSTANT_DEPARTURE("the set of characters to trim"),
    }),
    fn("REPLACE", "scalar", [3, 3], STRINGS3, STRING),
    fn("STRPOS", "scalar", [2, 2], STRINGS2, INT64),
    fn(
      "LEFT",
      "scalar",
      [2, 2],
      [
        [0, "STRING"],
        [1, "INT64"],
      ],
      STRING,
    ),
    fn(
      "RIGHT",
      "scalar",
      [2, 2],
      [
        [0, "STRING"],
        [1, "INT64"],
      ],
      STRING,
    ),
    fn("REVERSE", "scalar", [1, 1], [[0, "STRING"]], STRING),
    fn("CHAR_LENGTH", "scalar", [1, 1], [[0, "STRING"]], INT64),
    fn("FORMAT", "scalar", [1, 20], [[0, "STRING"]], STRING, { literalArgs: [0] }),
    fn("ARRAY_LENGTH", "scalar", [1, 1], [], INT64),
    fn("ARRAY_TO_STRING", "scalar", [2, 2], [[1, "STRING"]], STRING, {
      constantArgs: [1],
      departure: CONSTANT_DEPARTURE("the delimiter"),
    }),
    // JSON text
    fn("JSON_VALUE", "scalar", [1, 2], STRINGS2, STRING, { literalArgs: [1] }),
    fn("JSON_EXTRACT_SCALAR", "scalar", [1, 2], STRINGS2, STRING, { literalArgs: [1] }),
    fn("JSON_QUERY", "scalar", [1, 2], STRINGS2, STRING, { literalArgs: [1] }),
    fn("JSON_EXTRACT", "scalar", [1, 2], STRINGS2, STRING, { literalArgs: [1] }),
    // numbers
    fn("SAFE_DIVIDE", "scalar", [2, 2], NUMBERS2, FLOAT64),
    fn("ROUND", "scalar", [1, 2], NUMBER_AND_DIGITS, FLOAT64),
    fn("TRUNC", "scalar", [1, 2], NUMBER_AND_DIGITS, FLOAT64),
    fn("DIV", "scalar", [2, 2], INTEGERS2, INT64),
    fn("MOD", "scalar", [2, 2], INTEGERS2, INT64),
    fn("ABS", "scalar", [1, 1], [[0, ...NUM]], sameAsFirst),
    fn("SIGN", "scalar", [1, 1], [[0, ...NUM]], sameAsFirst),
    fn("FLOOR", "scalar", [1, 1], [[0, ...NUM]], FLOAT64),
    fn("CEIL", "scalar", [1, 1], [[0, ...NUM]], FLOAT64),
    fn("CEILING", "scalar", [1, 1], [[0, ...NUM]], FLOAT64),
    fn("SQRT", "scalar", [1, 1], [[0, ...NUM]], FLOAT64),
    fn("POW", "scalar", [2, 2], NUMBERS2, FLOAT64),
    fn("POWER", "scalar", [2, 2], NUMBERS2, FLOAT64),
    fn("LN", "scalar", [1, 1], [[0, ...NUM]], FLOAT64),
    fn("LOG10", "scalar", [1, 1], [[0, ...NUM]], FLOAT64),
    fn("EXP", "scalar", [1, 1], [[0, ...NUM]], FLOAT64),
    // resultArgs: INT64 arguments widened where the result is FLOAT64 (ClickHouse finds no common type)
    fn("GREATEST", "scalar", [1, 50], [], (a, n) => ordered(n, common(n, a)), { resultArgs: "all" }),
    fn("LEAST", "scalar", [1, 50], [], (a, n) => ordered(n, common(n, a)), { resultArgs: "all" }),
    // time
    fn(
      "TIMESTAMP_DIFF",
      "scalar",
      [3, 3],
      [
        [0, ...TIME],
        [1, ...TIME],
      ],
      INT64,
      { literalAs: ["TIMESTAMP", "TIMESTAMP"], datePartArgs: [2] },
    ),
    fn("TIMESTAMP_MILLIS", "scalar", [1, 1], [[0, "INT64"]], TIMESTAMP),
    fn("TIMESTAMP_SECONDS", "scalar", [1, 1], [[0, "INT64"]], TIMESTAMP),
    fn("UNIX_MILLIS", "scalar", [1, 1], [[0, ...TIME]], INT64, { literalAs: ["TIMESTAMP"] }),
    fn("UNIX_SECONDS", "scalar", [1, 1], [[0, ...TIME]], INT64, { literalAs: ["TIMESTAMP"] }),
    // The text is read at run time: a zone argument applies only to text without an offset.
    fn(
      "TIMESTAMP",
      "scalar",
      [1, 2],
      [
        [0, "STRING", "TIMESTAMP", "DATETIME", "DATE"],
        [1, "STRING"],
      ],
      TIMESTAMP,
      { zoneArg: 1, departure: ZONE_DEPARTURE },
    ),
    fn(
      "FORMAT_TIMESTAMP",
      "scalar",
      [2, 3],
      [
        [0, "STRING"],
        [1, ...TIME],
        [2, "STRING"],
      ],
      STRING,
      { literalAs: [undefined, "TIMESTAMP"], literalArgs: [0], zoneArg: 2, departure: ZONE_DEPARTURE },
    ),
    fn("PARSE_TIMESTAMP", "scalar", [2, 3], STRINGS3, TIMESTAMP, {
      literalArgs: [0],
      zoneArg: 2,
      departure: ZONE_DEPARTURE,
      rewriteArgs: parsedFromEpoch,
    }),
    // BigQuery: PARSE_TIMESTAMP in UTC, the date kept; FORMAT_DATE: FORMAT_TIMESTAMP at midnight UTC
    fn("PARSE_DATE", "scalar", [2, 2], STRINGS2, DATE, { literalArgs: [0], rewriteArgs: parsedFromEpoch }),
    fn(
      "FORMAT_DATE",
      "scalar",
      [2, 2],
      [
        [0, "STRING"],
        [1, "DATE"],
      ],
      STRING,
      { literalAs: [undefined, "DATE"], literalArgs: [0] },
    ),
    // BigQuery: the civil time's fields, as FORMAT_TIMESTAMP writes them in UTC
    fn(
      "FORMAT_DATETIME",
      "scalar",
      [2, 2],
      [
        [0, "STRING"],
        [1, "DATETIME"],
      ],
      STRING,
      { literalAs: [undefined, "DATETIME"], literalArgs: [0] },
    ),
    fn(
      "GENERATE_TIMESTAMP_ARRAY",
      "scalar",
      [3, 3],
      [
        [0, ...TIME],
        [1, ...TIME],
      ],
      nativeArray("TIMESTAMP"),
      { literalAs: ["TIMESTAMP", "TIMESTAMP"] },
    ),
    fn("CURRENT_DATE", "scalar", [0, 1], [], DATE, { zoneArg: 0, departure: ZONE_DEPARTURE }),
    fn("CURRENT_DATETIME", "scalar", [0, 1], [], DATETIME, { zoneArg: 0, departure: ZONE_DEPARTURE }),
    fn("DATE_TRUNC", "scalar", [2, 2], [[0, "DATE"]], DATE, { literalAs: ["DATE"], datePartArgs: [1] }),
    fn("DATETIME_TRUNC", "scalar", [2, 2], [[0, "DATETIME"]], DATETIME, {
      literalAs: ["DATETIME"],
      datePartArgs: [1],
    }),
    fn(
      "DATE_DIFF",
      "scalar",
      [3, 3],
      [
        [0, "DATE"],
        [1, "DATE"],
      ],
      INT64,
      { literalAs: ["DATE", "DATE"], datePartArgs: [2] },
    ),
    fn("DATE_SUB", "scalar", [2, 2], [[0, "DATE"]], DATE, { literalAs: ["DATE"] }),
    fn("DATE_ADD", "scalar", [2, 2], [[0, "DATE"]], DATE, { literalAs: ["DATE"] }),
  ] as const;
}

export { elementOf, numericResult };

/** The name of a catalogue function. */
export type FunctionName = (typeof specs)[number]["name"];

/**
 * Catalogue functions that no dialect emits: compile/special-forms.ts rewrites each into other
 * calls (or a parameter) before any dialect sees it, with the one validation it has.
 */
export const SPECIAL_FORM_NAMES = [
  "APPROX_QUANTILES",
  "CURRENT_TIMESTAMP",
  "CURRENT_DATE",
  "CURRENT_DATETIME",
] as const satisfies readonly FunctionName[];
export type SpecialFormName = (typeof SPECIAL_FORM_NAMES)[number];

/** A catalogue function a dialect writes: each dialect's function table has one row per name. */
export type EmittedFunctionName = Exclude<FunctionName, SpecialFormName>;

export const FUNCTIONS: ReadonlyMap<string, FunctionSpec<FunctionName>> = new Map(
  specs.map((s) => [s.name, s]),
);

export function lookupFunction(name: string): FunctionSpec<FunctionName> | undefined {
  return FUNCTIONS.get(name.toUpperCase());
}

export { isNumeric };
