import { DuckdbDialect, duckdbDialect } from "@qes/backend-duckdb";
import {
  allSignatures,
  builtinLogSchema,
  type CallExpr,
  compileEndpoint,
  FUNCTIONS,
  type FunctionEmitter,
  type FunctionName,
  type FunctionTable,
  isUnsupported,
  parseEvent,
  signatureOfCall,
  signatureText,
  widenSchema,
} from "@qes/core";
import { describe, expect, it } from "vitest";
import { sqlEndpoint } from "../support/run-sql.ts";
import { ALL_CASES } from "./cases/index.ts";
import { EVENTS } from "./events.ts";

// The function × backend matrix (issue 11): every signature of every catalogue function is run by
// a case of the SQL case table, and sql-cases.test.ts runs every case on every backend in
// BACKENDS with the same expected rows. This test fails when a catalogue function or signature
// has no case that returns rows.

function eventSchema() {
  const schema = builtinLogSchema();
  for (const [source, lines] of Object.entries(EVENTS)) {
    lines.forEach((line, i) => {
      const event = parseEvent(line, i + 1, 1736942400000000n, "test");
      if (event) widenSchema(schema.sources[source]!, event.body);
    });
  }
  return schema;
}

/** DuckDB's dialect, noting each call it emits. */
class RecordingDialect extends DuckdbDialect {
  readonly calls: CallExpr[] = [];
  override readonly functions: FunctionTable = Object.fromEntries(
    Object.entries(duckdbDialect.functions).map(([name, row]) => [
      name,
      isUnsupported(row)
        ? row
        : (((args, call, e) => {
            this.calls.push(call);
            return row(args, call, e);
          }) satisfies FunctionEmitter),
    ]),
  ) as FunctionTable;
}

/** Special forms never reach a dialect: they count when the SQL writes them. */
const SPECIAL_FORM_TEXT: Array<[RegExp, string]> = [
  [/\bcurrent_timestamp\s*\(\s*\)/i, "CURRENT_TIMESTAMP()"],
  [/\bcurrent_date\s*\(\s*\)/i, "CURRENT_DATE()"],
  [/\bcurrent_date\s*\(\s*'/i, "CURRENT_DATE(ZONE)"],
  [/\bcurrent_datetime\s*\(\s*\)/i, "CURRENT_DATETIME()"],
  [/\bcurrent_datetime\s*\(\s*'/i, "CURRENT_DATETIME(ZONE)"],
];

function coverage() {
  const schema = eventSchema();
  const covered = new Map<string, string[]>();
  const unmatched = new Set<string>();
  const note = (signature: string, caseName: string) =>
    covered.set(signature, [...(covered.get(signature) ?? []), caseName]);
  for (const c of ALL_CASES) {
    if (!Array.isArray(c.expect)) continue;
    const dialect = new RecordingDialect();
    try {
      compileEndpoint(sqlEndpoint(c.sql, c.params), { schema, dialect });
    } catch (e) {
      unmatched.add(`${c.name}: ${(e as Error).message}`);
      continue;
    }
    for (const call of dialect.calls) {
      const fn: string = call.fn === "__QUANTILE" ? "APPROX_QUANTILES" : call.fn;
      if (!FUNCTIONS.has(fn)) continue;
      const args = call.fn === "__QUANTILE" ? call.args.slice(0, 2) : call.args;
      const signature = signatureOfCall(fn as FunctionName, args);
      if (signature) note(signatureText(signature), c.name);
      else
        unmatched.add(`${fn}(${args.map((a) => (a.type.t === "scalar" ? a.type.s : a.type.t)).join(", ")})`);
    }
    for (const [pattern, signature] of SPECIAL_FORM_TEXT) if (pattern.test(c.sql)) note(signature, c.name);
  }
  return { covered, unmatched };
}

describe("the function × backend matrix", () => {
  const { covered, unmatched } = coverage();

  it("runs every signature of every catalogue function in a case that returns rows", () => {
    const missing = allSignatures()
      .map(signatureText)
      .filter((s) => !covered.has(s));
    expect(missing).toEqual([]);
  });

  it("compiles every case and knows the signature of every catalogue call they make", () => {
    expect([...unmatched].sort()).toEqual([]);
  });
});
