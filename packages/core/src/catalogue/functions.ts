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

/**
 * The BigQuery functions the compiler knows (DESIGN.md §5). Only these are callable: engine
 * functions that touch files, network, settings or catalogs are unreachable because they are not
 * here. Each entry types its call; each dialect has a table that emits it.
 */
export interface FunctionSpec {
  name: string;
  kind: "scalar" | "aggregate" | "window";
  minArgs: number;
  maxArgs: number;
  /** what string literals in each position are coerced to (BigQuery's literal coercion) */
  literalAs?: (ScalarType | undefined)[];
  /** arguments that are date parts (`HOUR` in TIMESTAMP_TRUNC) */
  datePartArgs?: number[];
  /** argument positions that are regular-expression patterns */
  patternArgs?: number[];
  returns: (args: SqlType[], name: string) => SqlType;
}

const fixed = (t: SqlType) => () => t;
const sameAsFirst = (args: SqlType[]) => args[0] ?? STRING;

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

const NUM: ScalarType[] = ["INT64", "FLOAT64"];
const TIME: ScalarType[] = ["TIMESTAMP"];
const nativeArray = (element: ScalarType): SqlType => ({ t: "array", element, native: true });
const elementOf = (t: SqlType | undefined): SqlType =>
  t?.t === "array" ? { t: "scalar", s: t.element } : { t: "null" };
const numericResult = (a: SqlType[]) =>
  a.every((x) => x.t === "null" || (x.t === "scalar" && x.s === "INT64")) ? INT64 : FLOAT64;

const specs: FunctionSpec[] = [
  // aggregates
  { name: "COUNT", kind: "aggregate", minArgs: 0, maxArgs: 1, returns: fixed(INT64) },
  {
    name: "COUNTIF",
    kind: "aggregate",
    minArgs: 1,
    maxArgs: 1,
    returns: checked([[0, "BOOL"]], () => INT64),
  },
  {
    name: "SUM",
    kind: "aggregate",
    minArgs: 1,
    maxArgs: 1,
    returns: checked([[0, "INT64", "FLOAT64"]], (a) =>
      a[0]?.t === "scalar" && a[0].s === "INT64" ? INT64 : FLOAT64,
    ),
  },
  {
    name: "AVG",
    kind: "aggregate",
    minArgs: 1,
    maxArgs: 1,
    returns: checked([[0, "FLOAT64"]], () => FLOAT64),
  },
  { name: "MIN", kind: "aggregate", minArgs: 1, maxArgs: 1, returns: sameAsFirst },
  { name: "MAX", kind: "aggregate", minArgs: 1, maxArgs: 1, returns: sameAsFirst },
  { name: "ANY_VALUE", kind: "aggregate", minArgs: 1, maxArgs: 1, returns: sameAsFirst },
  {
    name: "LOGICAL_OR",
    kind: "aggregate",
    minArgs: 1,
    maxArgs: 1,
    returns: checked([[0, "BOOL"]], () => BOOL),
  },
  {
    name: "LOGICAL_AND",
    kind: "aggregate",
    minArgs: 1,
    maxArgs: 1,
    returns: checked([[0, "BOOL"]], () => BOOL),
  },
  // conditionals
  { name: "COALESCE", kind: "scalar", minArgs: 1, maxArgs: 100, returns: (a, n) => common(n, a) },
  { name: "IFNULL", kind: "scalar", minArgs: 2, maxArgs: 2, returns: (a, n) => common(n, a) },
  { name: "NULLIF", kind: "scalar", minArgs: 2, maxArgs: 2, returns: sameAsFirst },
  {
    name: "IF",
    kind: "scalar",
    minArgs: 3,
    maxArgs: 3,
    returns: checked([[0, "BOOL"]], (a, n) => common(n, a.slice(1))),
  },
  // strings
  {
    name: "LOWER",
    kind: "scalar",
    minArgs: 1,
    maxArgs: 1,
    returns: checked([[0, "STRING"]], () => STRING),
  },
  {
    name: "UPPER",
    kind: "scalar",
    minArgs: 1,
    maxArgs: 1,
    returns: checked([[0, "STRING"]], () => STRING),
  },
  {
    name: "LENGTH",
    kind: "scalar",
    minArgs: 1,
    maxArgs: 1,
    returns: checked([[0, "STRING"]], () => INT64),
  },
  {
    name: "STARTS_WITH",
    kind: "scalar",
    minArgs: 2,
    maxArgs: 2,
    returns: checked(
      [
        [0, "STRING"],
        [1, "STRING"],
      ],
      () => BOOL,
    ),
  },
  {
    name: "ENDS_WITH",
    kind: "scalar",
    minArgs: 2,
    maxArgs: 2,
    returns: checked(
      [
        [0, "STRING"],
        [1, "STRING"],
      ],
      () => BOOL,
    ),
  },
  { name: "CONCAT", kind: "scalar", minArgs: 1, maxArgs: 100, returns: fixed(STRING) },
  {
    name: "REGEXP_CONTAINS",
    kind: "scalar",
    minArgs: 2,
    maxArgs: 2,
    patternArgs: [1],
    returns: checked(
      [
        [0, "STRING"],
        [1, "STRING"],
      ],
      () => BOOL,
    ),
  },
  // time
  { name: "CURRENT_TIMESTAMP", kind: "scalar", minArgs: 0, maxArgs: 0, returns: fixed(TIMESTAMP) },
  {
    name: "TIMESTAMP_TRUNC",
    kind: "scalar",
    minArgs: 2,
    maxArgs: 3,
    literalAs: ["TIMESTAMP"],
    datePartArgs: [1],
    returns: checked([[0, "TIMESTAMP"]], () => TIMESTAMP),
  },
  {
    name: "TIMESTAMP_SUB",
    kind: "scalar",
    minArgs: 2,
    maxArgs: 2,
    literalAs: ["TIMESTAMP"],
    returns: checked([[0, "TIMESTAMP"]], () => TIMESTAMP),
  },
  {
    name: "TIMESTAMP_ADD",
    kind: "scalar",
    minArgs: 2,
    maxArgs: 2,
    literalAs: ["TIMESTAMP"],
    returns: checked([[0, "TIMESTAMP"]], () => TIMESTAMP),
  },
  {
    name: "DATETIME",
    kind: "scalar",
    minArgs: 1,
    maxArgs: 2,
    literalAs: ["TIMESTAMP", "STRING"],
    returns: checked([[0, "TIMESTAMP", "DATETIME", "DATE"]], () => DATETIME),
  },
  {
    name: "DATE",
    kind: "scalar",
    minArgs: 1,
    maxArgs: 3,
    literalAs: ["TIMESTAMP", "STRING"],
    returns: (a, n) =>
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
  },
  {
    name: "UNIX_MICROS",
    kind: "scalar",
    minArgs: 1,
    maxArgs: 1,
    literalAs: ["TIMESTAMP"],
    returns: checked([[0, "TIMESTAMP"]], () => INT64),
  },
  {
    name: "TIMESTAMP_MICROS",
    kind: "scalar",
    minArgs: 1,
    maxArgs: 1,
    returns: checked([[0, "INT64"]], () => TIMESTAMP),
  },
  ...moreFunctions(),
];

/** Compact rows: name, kind, arity, accepted argument types, result. */
function fn(
  name: string,
  kind: FunctionSpec["kind"],
  arity: [number, number],
  accepts: Array<[number, ...ScalarType[]]>,
  result: SqlType | ((args: SqlType[], name: string) => SqlType),
  extra: Partial<FunctionSpec> = {},
): FunctionSpec {
  return {
    name,
    kind,
    minArgs: arity[0],
    maxArgs: arity[1],
    returns: checked(accepts, typeof result === "function" ? result : () => result),
    ...extra,
  };
}

function moreFunctions(): FunctionSpec[] {
  return [
    // aggregates
    fn("APPROX_COUNT_DISTINCT", "aggregate", [1, 1], [], INT64),
    fn("ARRAY_AGG", "aggregate", [1, 1], [], (a) => nativeArray(a[0]?.t === "scalar" ? a[0].s : "STRING")),
    fn(
      "STRING_AGG",
      "aggregate",
      [1, 2],
      [
        [0, "STRING"],
        [1, "STRING"],
      ],
      STRING,
    ),
    // window functions
    fn("ROW_NUMBER", "window", [0, 0], [], INT64),
    fn("RANK", "window", [0, 0], [], INT64),
    fn("DENSE_RANK", "window", [0, 0], [], INT64),
    fn("PERCENT_RANK", "window", [0, 0], [], FLOAT64),
    fn("CUME_DIST", "window", [0, 0], [], FLOAT64),
    fn("NTILE", "window", [1, 1], [[0, "INT64"]], INT64),
    fn("LAG", "window", [1, 3], [[1, "INT64"]], (a, n) => common(n, [a[0]!, a[2] ?? { t: "null" }])),
    fn("LEAD", "window", [1, 3], [[1, "INT64"]], (a, n) => common(n, [a[0]!, a[2] ?? { t: "null" }])),
    fn("FIRST_VALUE", "window", [1, 1], [], sameAsFirst),
    fn("LAST_VALUE", "window", [1, 1], [], sameAsFirst),
    // strings
    fn(
      "REGEXP_EXTRACT",
      "scalar",
      [2, 2],
      [
        [0, "STRING"],
        [1, "STRING"],
      ],
      STRING,
      { patternArgs: [1] },
    ),
    fn(
      "REGEXP_REPLACE",
      "scalar",
      [3, 3],
      [
        [0, "STRING"],
        [1, "STRING"],
        [2, "STRING"],
      ],
      STRING,
      { patternArgs: [1] },
    ),
    fn(
      "CONTAINS_SUBSTR",
      "scalar",
      [2, 2],
      [
        [0, "STRING"],
        [1, "STRING"],
      ],
      BOOL,
    ),
    fn(
      "SUBSTR",
      "scalar",
      [2, 3],
      [
        [0, "STRING"],
        [1, "INT64"],
        [2, "INT64"],
      ],
      STRING,
    ),
    fn(
      "SUBSTRING",
      "scalar",
      [2, 3],
      [
        [0, "STRING"],
        [1, "INT64"],
        [2, "INT64"],
      ],
      STRING,
    ),
    fn(
      "SPLIT",
      "scalar",
      [1, 2],
      [
        [0, "STRING"],
        [1, "STRING"],
      ],
      nativeArray("STRING"),
    ),
    fn(
      "TRIM",
      "scalar",
      [1, 2],
      [
        [0, "STRING"],
        [1, "STRING"],
      ],
      STRING,
    ),
    fn(
      "LTRIM",
      "scalar",
      [1, 2],
      [
        [0, "STRING"],
        [1, "STRING"],
      ],
      STRING,
    ),
    fn(
      "RTRIM",
      "scalar",
      [1, 2],
      [
        [0, "STRING"],
        [1, "STRING"],
      ],
      STRING,
    ),
    fn(
      "REPLACE",
      "scalar",
      [3, 3],
      [
        [0, "STRING"],
        [1, "STRING"],
        [2, "STRING"],
      ],
      STRING,
    ),
    fn(
      "STRPOS",
      "scalar",
      [2, 2],
      [
        [0, "STRING"],
        [1, "STRING"],
      ],
      INT64,
    ),
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
    fn("FORMAT", "scalar", [1, 20], [[0, "STRING"]], STRING),
    fn("ARRAY_LENGTH", "scalar", [1, 1], [], INT64),
    fn("ARRAY_TO_STRING", "scalar", [2, 2], [[1, "STRING"]], STRING),
    // JSON text
    fn(
      "JSON_VALUE",
      "scalar",
      [1, 2],
      [
        [0, "STRING"],
        [1, "STRING"],
      ],
      STRING,
    ),
    fn(
      "JSON_EXTRACT_SCALAR",
      "scalar",
      [1, 2],
      [
        [0, "STRING"],
        [1, "STRING"],
      ],
      STRING,
    ),
    fn(
      "JSON_QUERY",
      "scalar",
      [1, 2],
      [
        [0, "STRING"],
        [1, "STRING"],
      ],
      STRING,
    ),
    fn(
      "JSON_EXTRACT",
      "scalar",
      [1, 2],
      [
        [0, "STRING"],
        [1, "STRING"],
      ],
      STRING,
    ),
    // numbers
    fn(
      "SAFE_DIVIDE",
      "scalar",
      [2, 2],
      [
        [0, ...NUM],
        [1, ...NUM],
      ],
      FLOAT64,
    ),
    fn(
      "ROUND",
      "scalar",
      [1, 2],
      [
        [0, ...NUM],
        [1, "INT64"],
      ],
      FLOAT64,
    ),
    fn(
      "TRUNC",
      "scalar",
      [1, 2],
      [
        [0, ...NUM],
        [1, "INT64"],
      ],
      FLOAT64,
    ),
    fn(
      "DIV",
      "scalar",
      [2, 2],
      [
        [0, "INT64"],
        [1, "INT64"],
      ],
      INT64,
    ),
    fn(
      "MOD",
      "scalar",
      [2, 2],
      [
        [0, "INT64"],
        [1, "INT64"],
      ],
      INT64,
    ),
    fn("ABS", "scalar", [1, 1], [[0, ...NUM]], sameAsFirst),
    fn("SIGN", "scalar", [1, 1], [[0, ...NUM]], sameAsFirst),
    fn("FLOOR", "scalar", [1, 1], [[0, ...NUM]], FLOAT64),
    fn("CEIL", "scalar", [1, 1], [[0, ...NUM]], FLOAT64),
    fn("CEILING", "scalar", [1, 1], [[0, ...NUM]], FLOAT64),
    fn("SQRT", "scalar", [1, 1], [[0, ...NUM]], FLOAT64),
    fn(
      "POW",
      "scalar",
      [2, 2],
      [
        [0, ...NUM],
        [1, ...NUM],
      ],
      FLOAT64,
    ),
    fn(
      "POWER",
      "scalar",
      [2, 2],
      [
        [0, ...NUM],
        [1, ...NUM],
      ],
      FLOAT64,
    ),
    fn("LN", "scalar", [1, 1], [[0, ...NUM]], FLOAT64),
    fn("LOG10", "scalar", [1, 1], [[0, ...NUM]], FLOAT64),
    fn("EXP", "scalar", [1, 1], [[0, ...NUM]], FLOAT64),
    fn("GREATEST", "scalar", [1, 50], [], (a, n) => common(n, a)),
    fn("LEAST", "scalar", [1, 50], [], (a, n) => common(n, a)),
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
      { literalAs: [undefined, "TIMESTAMP"] },
    ),
    fn(
      "PARSE_TIMESTAMP",
      "scalar",
      [2, 3],
      [
        [0, "STRING"],
        [1, "STRING"],
        [2, "STRING"],
      ],
      TIMESTAMP,
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
    fn("CURRENT_DATE", "scalar", [0, 1], [], DATE),
    fn("CURRENT_DATETIME", "scalar", [0, 1], [], DATETIME),
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
  ];
}

export { elementOf, numericResult };

export const FUNCTIONS: ReadonlyMap<string, FunctionSpec> = new Map(specs.map((s) => [s.name, s]));

export function lookupFunction(name: string): FunctionSpec | undefined {
  return FUNCTIONS.get(name.toUpperCase());
}

export { isNumeric };
