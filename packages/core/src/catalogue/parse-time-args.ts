import type { Expr } from "../compile/ir.ts";
import { STRING } from "../compile/sql-type.ts";
import { withEpochDefaults } from "../dialect/time-format.ts";

/**
 * PARSE_TIMESTAMP's and PARSE_DATE's arguments with the date fields their format leaves out given
 * as BigQuery gives them, from 1970-01-01 (`withEpochDefaults`): the missing elements go before the
 * format literal and their text, through CONCAT, before the text. Every dialect then parses a
 * complete date (the engines' own defaults were 1900, 2000 and 1 BC). A format that is not a
 * literal is left for the dialect to refuse.
 */
export function parsedFromEpoch(args: Expr[]): Expr[] {
  const [format, text, ...rest] = args;
  if (format?.k !== "lit" || typeof format.value !== "string" || text === undefined) return args;
  const { format: complete, prefix } = withEpochDefaults(format.value);
  if (prefix === "") return args;
  return [
    { ...format, value: complete },
    { k: "call", fn: "CONCAT", args: [{ k: "lit", value: prefix, type: STRING }, text], type: STRING },
    ...rest,
  ];
}
