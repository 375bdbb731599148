/**
 * The signatures of each catalogue function: what docs/functions.md documents per dialect and
 * what the SQL case table must run on every backend (test/sql/function-matrix.test.ts). Most are
 * derived from the catalogue row (arity, accepted types, date-part positions); functions whose
 * signatures differ in kind, not only in count, list them here.
 */
import type { Expr } from "../compile/ir.ts";
import type { ScalarType } from "../schema/schema-model.ts";
import { FUNCTIONS, type FunctionName, type FunctionSpec } from "./functions.ts";

/**
 * One argument: a scalar type (INT64 passes where FLOAT64 is accepted), `NUMBER` (INT64 or
 * FLOAT64), `ANY`, a date part keyword, an INTERVAL, an array, or a STRING that must be written as
 * a literal (a format, a JSONPath, a time zone name).
 */
export type ArgKind =
  | ScalarType
  | "NUMBER"
  | "ANY"
  | "DATE_PART"
  | "INTERVAL"
  | "ARRAY"
  | "FORMAT"
  | "JSONPATH"
  | "ZONE";

export interface Signature {
  fn: FunctionName;
  args: readonly ArgKind[];
  /** the last argument may repeat */
  variadic?: boolean;
}

/** Functions whose signatures the catalogue row does not say; a final `…` repeats the last kind. */
const LISTED: Partial<Record<FunctionName, ReadonlyArray<ReadonlyArray<ArgKind | "…">>>> = {
  FORMAT: [["FORMAT"], ["FORMAT", "ANY", "…"]],
  TIMESTAMP_TRUNC: [
    ["TIMESTAMP", "DATE_PART"],
    ["TIMESTAMP", "DATE_PART", "ZONE"],
  ],
  TIMESTAMP_SUB: [["TIMESTAMP", "INTERVAL"]],
  TIMESTAMP_ADD: [["TIMESTAMP", "INTERVAL"]],
  DATE_SUB: [["DATE", "INTERVAL"]],
  DATE_ADD: [["DATE", "INTERVAL"]],
  DATETIME: [["TIMESTAMP"], ["TIMESTAMP", "ZONE"], ["DATE"]],
  DATE: [["INT64", "INT64", "INT64"], ["TIMESTAMP"], ["TIMESTAMP", "ZONE"], ["DATETIME"]],
  TIMESTAMP: [
    ["STRING"],
    ["STRING", "ZONE"],
    ["TIMESTAMP"],
    ["DATETIME"],
    ["DATETIME", "ZONE"],
    ["DATE"],
    ["DATE", "ZONE"],
  ],
  CURRENT_DATE: [[], ["ZONE"]],
  CURRENT_DATETIME: [[], ["ZONE"]],
  FORMAT_TIMESTAMP: [
    ["FORMAT", "TIMESTAMP"],
    ["FORMAT", "TIMESTAMP", "ZONE"],
  ],
  PARSE_TIMESTAMP: [
    ["FORMAT", "STRING"],
    ["FORMAT", "STRING", "ZONE"],
  ],
  PARSE_DATE: [["FORMAT", "STRING"]],
  FORMAT_DATE: [["FORMAT", "DATE"]],
  FORMAT_DATETIME: [["FORMAT", "DATETIME"]],
  GENERATE_TIMESTAMP_ARRAY: [["TIMESTAMP", "TIMESTAMP", "INTERVAL"]],
  JSON_VALUE: [["STRING"], ["STRING", "JSONPATH"]],
  JSON_EXTRACT_SCALAR: [["STRING"], ["STRING", "JSONPATH"]],
  JSON_QUERY: [["STRING"], ["STRING", "JSONPATH"]],
  JSON_EXTRACT: [["STRING"], ["STRING", "JSONPATH"]],
  ARRAY_LENGTH: [["ARRAY"]],
  ARRAY_TO_STRING: [["ARRAY", "STRING"]],
  APPROX_QUANTILES: [["ANY", "INT64"]],
  LAG: [["ANY"], ["ANY", "INT64"], ["ANY", "INT64", "ANY"]],
  LEAD: [["ANY"], ["ANY", "INT64"], ["ANY", "INT64", "ANY"]],
};

/** Functions of more than this many arguments are written as variadic. */
const VARIADIC_SPAN = 3;

function derived(spec: FunctionSpec<FunctionName>): Signature[] {
  const kindAt = (i: number): ArgKind => {
    if (spec.datePartArgs?.includes(i)) return "DATE_PART";
    const accepted = spec.accepts?.find(([at]) => at === i)?.slice(1) as ScalarType[] | undefined;
    if (!accepted) return "ANY";
    if (accepted.length === 2 && accepted.includes("INT64") && accepted.includes("FLOAT64")) return "NUMBER";
    return accepted[0]!;
  };
  const kinds = (n: number) => Array.from({ length: n }, (_, i) => kindAt(i));
  if (spec.maxArgs - spec.minArgs > VARIADIC_SPAN) {
    return [{ fn: spec.name, args: kinds(Math.max(spec.minArgs, 1)), variadic: true }];
  }
  const out: Signature[] = [];
  for (let n = spec.minArgs; n <= spec.maxArgs; n++) out.push({ fn: spec.name, args: kinds(n) });
  return out;
}

/** Every signature of one catalogue function. */
export function signaturesOf(spec: FunctionSpec<FunctionName>): Signature[] {
  const listed = LISTED[spec.name];
  if (!listed) return derived(spec);
  return listed.map((kinds) => {
    const args = kinds.filter((k): k is ArgKind => k !== "…");
    return args.length < kinds.length ? { fn: spec.name, args, variadic: true } : { fn: spec.name, args };
  });
}

/** Every signature of every catalogue function, in catalogue order. */
export function allSignatures(): Signature[] {
  return [...FUNCTIONS.values()].flatMap(signaturesOf);
}

/** `NAME(KIND, KIND…)`, as docs and test messages write a signature. */
export function signatureText(s: Signature): string {
  return `${s.fn}(${s.args.join(", ")}${s.variadic ? ", …" : ""})`;
}

function argMatches(kind: ArgKind, arg: Expr): boolean {
  const t = arg.type;
  if (kind === "ANY") return true;
  if (kind === "DATE_PART") return arg.k === "datepart";
  if (kind === "INTERVAL") return t.t === "interval";
  if (kind === "ARRAY") return t.t === "array" || t.t === "records" || t.t === "null";
  if (t.t === "null") return true;
  if (t.t !== "scalar") return false;
  if (kind === "NUMBER") return t.s === "INT64" || t.s === "FLOAT64";
  if (kind === "FORMAT" || kind === "JSONPATH" || kind === "ZONE") return t.s === "STRING";
  return t.s === kind || (kind === "FLOAT64" && t.s === "INT64");
}

/** The signature a call in the query tree was written with, if any. */
export function signatureOfCall(name: FunctionName, args: readonly Expr[]): Signature | undefined {
  const spec = FUNCTIONS.get(name);
  if (!spec) return undefined;
  return signaturesOf(spec).find((s) => {
    if (s.variadic ? args.length < s.args.length : args.length !== s.args.length) return false;
    return args.every((a, i) => argMatches(s.args[Math.min(i, s.args.length - 1)]!, a));
  });
}
