import { type FunctionEmitter, rename } from "./sql-emitter.ts";

/** Emitters shared by the standard-SQL engines; dialects spread this table and override rows. */
export const DEFAULT_FUNCTIONS: Record<string, FunctionEmitter> = {
  COUNT: (args, call) =>
    args.length === 0 ? "count(*)" : `count(${call.agg?.distinct ? "DISTINCT " : ""}${args[0]})`,
  SUM: (args, call, e) =>
    `CAST(sum(${call.agg?.distinct ? "DISTINCT " : ""}${args[0]}) AS ${e.typeName(call.type.t === "scalar" ? call.type.s : "FLOAT64")})`,
  AVG: (args, call, e) =>
    `avg(${call.agg?.distinct ? "DISTINCT " : ""}${e.cast(args[0]!, call.args[0]!.type, "FLOAT64")})`,
  MIN: rename("min"),
  MAX: rename("max"),
  // BigQuery leaves ANY_VALUE's choice open; every backend takes the minimum (DESIGN.md §3).
  ANY_VALUE: rename("min"),
  LOGICAL_OR: rename("bool_or"),
  LOGICAL_AND: rename("bool_and"),
  COALESCE: rename("coalesce"),
  IFNULL: rename("coalesce"),
  NULLIF: rename("nullif"),
  IF: ([c, a, b]) => `CASE WHEN ${c} THEN ${a} ELSE ${b} END`,
  LOWER: rename("lower"),
  UPPER: rename("upper"),
  LENGTH: rename("length"),
  STARTS_WITH: rename("starts_with"),
  // BigQuery's CONCAT is NULL when any argument is; `||` behaves so on every engine.
  CONCAT: (args) => `(${args.join(" || ")})`,
  TIMESTAMP_TRUNC: ([ts, part]) => `date_trunc(${part}, ${ts})`,
  TIMESTAMP_SUB: ([ts, iv]) => `(${ts} - ${iv})`,
  TIMESTAMP_ADD: ([ts, iv]) => `(${ts} + ${iv})`,
  LEAST: rename("least"),
};
