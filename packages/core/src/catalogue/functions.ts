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
    maxArgs: 2,
    literalAs: ["TIMESTAMP", "STRING"],
    returns: checked([[0, "TIMESTAMP", "DATETIME", "DATE"]], () => DATE),
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
];

export const FUNCTIONS: ReadonlyMap<string, FunctionSpec> = new Map(specs.map((s) => [s.name, s]));

export function lookupFunction(name: string): FunctionSpec | undefined {
  return FUNCTIONS.get(name.toUpperCase());
}

export { isNumeric };
