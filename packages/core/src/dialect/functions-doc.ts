/**
 * docs/functions.md: per catalogue function and signature, the SQL each dialect emits and any
 * departure from BigQuery — rendered from the catalogue and the dialects' function tables, so the
 * one place a reader looks up a translation cannot drift from the code (`pnpm docs:functions`
 * writes it; test/compiler/functions-doc.test.ts fails when the committed file is stale).
 */
import { FUNCTIONS, type FunctionName, SPECIAL_FORM_NAMES } from "../catalogue/functions.ts";
import { DESUGARED_FORMS, INTERNAL_FUNCTIONS } from "../catalogue/internal-functions.ts";
import { type ArgKind, type Signature, signaturesOf, signatureText } from "../catalogue/signatures.ts";
import type { Expr } from "../compile/ir.ts";
import type { SqlType } from "../compile/sql-type.ts";
import { isQesError } from "../errors.ts";
import { type CallExpr, isUnsupported } from "./function-table.ts";
import type { SqlEmitter } from "./sql-emitter.ts";

const ARG_NAMES = "abcdefghij";

/** The format literal of an example call: FORMAT's has one specifier per value that follows. */
function formatExample(fn: FunctionName, count: number): string {
  if (fn === "FORMAT_TIMESTAMP") return "%Y-%m-%d %H:%M:%S";
  if (fn === "PARSE_TIMESTAMP" || fn === "PARSE_DATE" || fn === "FORMAT_DATE" || fn === "FORMAT_DATETIME")
    return "%Y-%m-%d";
  const specifiers = ["%d", "%s", "%.2f"].slice(0, count - 1);
  return specifiers.length ? `${specifiers.join(" of ")}` : "100%%";
}

function scalar(s: Extract<SqlType, { t: "scalar" }>["s"]): SqlType {
  return { t: "scalar", s };
}

/** The argument a signature's example call passes at position i: a column named a, b, c… */
function exampleArg(fn: FunctionName, kind: ArgKind, i: number, count: number): Expr {
  const column = (type: SqlType): Expr => ({ k: "col", rel: "", col: ARG_NAMES[i]!, type });
  switch (kind) {
    case "ANY":
      return column(scalar("INT64"));
    case "NUMBER":
      return column(scalar("FLOAT64"));
    case "DATE_PART":
      return { k: "datepart", part: "DAY", type: { t: "datepart", part: "DAY" } };
    case "INTERVAL":
      return { k: "interval", value: column(scalar("INT64")), unit: "DAY", type: { t: "interval" } };
    case "ARRAY":
      return column({ t: "array", element: "STRING", native: true });
    case "FORMAT":
      return { k: "lit", value: formatExample(fn, count), type: scalar("STRING") };
    case "JSONPATH":
      return { k: "lit", value: "$.a", type: scalar("STRING") };
    case "ZONE":
      return { k: "lit", value: "America/New_York", type: scalar("STRING") };
    default:
      return column(scalar(kind));
  }
}

function exampleCall(s: Signature): CallExpr {
  const spec = FUNCTIONS.get(s.fn)!;
  const kinds = s.variadic ? [...s.args, s.args[s.args.length - 1]!] : s.args;
  const args = kinds.map((k, i) => exampleArg(s.fn, k, i, kinds.length));
  const type = spec.returns(
    args.map((a) => a.type),
    spec.name,
  );
  return {
    k: "call",
    fn: s.fn as CallExpr["fn"],
    args,
    type,
    // ARRAY_AGG and STRING_AGG without ORDER BY are ordered by value (analyzeOrderedAggregate)
    ...(spec.kind === "aggregate"
      ? { agg: ORDERED_BY_VALUE.has(s.fn) ? { orderBy: [{ expr: args[0]!, desc: false }] } : {} }
      : {}),
    ...(spec.kind === "window" ? { over: { partitionBy: [], orderBy: [] } } : {}),
  };
}

const ORDERED_BY_VALUE = new Set<string>(["ARRAY_AGG", "STRING_AGG"]);

/** How one dialect writes one call, or why it does not. */
function emitted(dialect: SqlEmitter, call: CallExpr): string {
  const row = dialect.functions[call.fn];
  if (isUnsupported(row)) return `not supported: ${row.unsupported}`;
  try {
    return code(dialect.expr(call));
  } catch (e) {
    if (isQesError(e)) return `refused: ${e.message}`;
    throw e;
  }
}

function code(sql: string): string {
  const oneLine = sql.replace(/\s*\n\s*/g, " ");
  const fence = oneLine.includes("`") ? "``" : "`";
  return `${fence}${oneLine.replace(/\|/g, "\\|")}${fence}`;
}

/** How a call is written in the signature column: `TIMESTAMP_TRUNC(a, DAY, 'America/New_York')`. */
function callText(s: Signature): string {
  const kinds = s.variadic ? [...s.args, s.args[s.args.length - 1]!] : s.args;
  const args = kinds.map((k, i) => {
    const e = exampleArg(s.fn, k, i, kinds.length);
    if (e.k === "datepart") return "DAY";
    if (e.k === "interval") return `INTERVAL ${ARG_NAMES[i]} DAY`;
    if (e.k === "lit") return `'${e.value}'`;
    return ARG_NAMES[i]!;
  });
  if (s.fn === "APPROX_QUANTILES") return "APPROX_QUANTILES(a, 4)[OFFSET(1)]";
  return `${s.fn}(${args.join(", ")}${s.variadic ? ", …" : ""})`;
}

const SPECIAL_FORM_TEXT: Record<(typeof SPECIAL_FORM_NAMES)[number], string> = {
  APPROX_QUANTILES:
    "Rewritten before any dialect: an array of n+1 `__QUANTILE(a, k, n)` aggregates, k = 0…n (rows below show one).",
  CURRENT_TIMESTAMP:
    "The request's one instant, bound as a parameter (the same in every call of one request).",
  CURRENT_DATE: "`DATE(now [, zone])` of the request's instant: the DATE rows show the SQL.",
  CURRENT_DATETIME: "`DATETIME(now [, zone])` of the request's instant: the DATETIME rows show the SQL.",
};

const KIND_TITLES: Record<string, string> = {
  aggregate: "Aggregate functions",
  window: "Window functions",
  scalar: "Scalar functions",
};

/** The whole of docs/functions.md for these dialects. */
export function renderFunctionsDoc(dialects: readonly SqlEmitter[]): string {
  const out: string[] = [
    "# BigQuery functions on each backend",
    "",
    "<!-- Generated by `pnpm docs:functions` from packages/core/src/catalogue and each dialect's function",
    "     table. Do not edit: test/compiler/functions-doc.test.ts fails when this file is stale. -->",
    "",
    "Every function a query may call, each signature, and the SQL each dialect writes for it.",
    "Arguments are shown as columns `a`, `b`, `c`; date parts as `DAY`; formats, JSONPaths and time",
    "zones as the literals they must be. A row a dialect cannot express says so: a query calling it",
    "is refused when it compiles for that backend (`qes check`, start-up, consumer SQL), naming the",
    "backend. Departures from BigQuery are listed under the function (DESIGN.md §3).",
    "",
    "Every scalar function below may be called with BigQuery's `SAFE.` prefix (`SAFE.PARSE_TIMESTAMP(…)`):",
    "where the function itself would raise BigQuery's error (the checks of docs/compiler.md, \"BigQuery's",
    "run-time errors\"), the answer is NULL; its arguments' errors still raise. Aggregates, window",
    "functions and names outside this list are refused with the prefix as without it.",
    "",
    `Dialects: ${dialects.map((d) => d.name).join(", ")}.`,
    "",
  ];
  const header = `| signature | ${dialects.map((d) => d.name).join(" | ")} |`;
  const rule = `|---|${dialects.map(() => "---").join("|")}|`;
  for (const kind of ["aggregate", "window", "scalar"] as const) {
    out.push(`## ${KIND_TITLES[kind]}`, "");
    const specs = [...FUNCTIONS.values()]
      .filter((s) => s.kind === kind)
      .sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const spec of specs) {
      out.push(`### ${spec.name}`, "");
      if (spec.departure) out.push(`Departure from BigQuery: ${spec.departure}`, "");
      const special = (SPECIAL_FORM_NAMES as readonly string[]).includes(spec.name)
        ? SPECIAL_FORM_TEXT[spec.name as (typeof SPECIAL_FORM_NAMES)[number]]
        : undefined;
      if (special) out.push(special, "");
      if (
        spec.name === "CURRENT_TIMESTAMP" ||
        spec.name === "CURRENT_DATE" ||
        spec.name === "CURRENT_DATETIME"
      )
        continue;
      out.push(header, rule);
      for (const s of signaturesOf(spec)) {
        const call = spec.name === "APPROX_QUANTILES" ? quantileExample() : exampleCallOrError(s);
        const cells =
          typeof call === "string" ? dialects.map(() => call) : dialects.map((d) => emitted(d, call));
        out.push(
          `| ${code(callText(s))}<br>${signatureText(s).replace(/\|/g, "\\|")} | ${cells.join(" | ")} |`,
        );
      }
      out.push("");
    }
  }
  out.push("## Calls the compiler writes", "");
  out.push("Every dialect's table has a row for each of these too; user SQL cannot name them.", "");
  for (const [name, what] of Object.entries(INTERNAL_FUNCTIONS)) out.push(`- \`${name}\`: ${what}`);
  out.push("", "## Desugared forms", "");
  out.push(
    "Constructs node-sql-parser cannot read are rewritten into these calls before parsing",
    "(packages/core/src/parse/desugar*.ts) and read back by the analyser as what was written:",
    "",
  );
  for (const [name, what] of Object.entries(DESUGARED_FORMS)) out.push(`- \`${name}\`: ${what}`);
  out.push("");
  return out.join("\n");
}

function exampleCallOrError(s: Signature): CallExpr | string {
  try {
    return exampleCall(s);
  } catch (e) {
    if (isQesError(e)) return `refused: ${e.message}`;
    throw e;
  }
}

function quantileExample(): CallExpr {
  const int = (value: number): Expr => ({ k: "lit", value, type: scalar("INT64") });
  const a: Expr = { k: "col", rel: "", col: "a", type: scalar("INT64") };
  return { k: "call", fn: "__QUANTILE", args: [a, int(1), int(4)], type: a.type, agg: {} };
}
