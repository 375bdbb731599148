/**
 * Text of values in stored JSON (records and arrays as ingest writes them: core's spelling of
 * every number, JavaScript's `1e+21`) read as STRING. DuckDB parses JSON and writes a number back
 * as `1e21`: these put the `+` back, so a value reads the same in the engine (UNNEST, subscripts,
 * ARRAY_TO_STRING, comparisons) as on the wire and on PostgreSQL and ClickHouse.
 */

import { duckdbFloatText } from "./duckdb-float-text.ts";
import { sqlString as sql } from "./duckdb-sql.ts";

/**
 * JSON text with every number's positive exponent signed as JavaScript writes it (`1e21` →
 * `1e+21`), strings untouched: the text is cut into strings and the runs between them. DuckDB
 * writes numbers as JavaScript does otherwise (shortest digits, the same fixed range).
 */
export function jsonExponentsAsCore(json: string): string {
  const pieces = `regexp_extract_all(${json}, ${sql('"(?:[^"\\\\]|\\\\.)*"|[^"]+')})`;
  return `array_to_string(list_transform(${pieces}, __p -> CASE WHEN starts_with(__p, '"') THEN __p ELSE regexp_replace(__p, '([0-9.])e([0-9])', '\\1e+\\2', 'g') END), '')`;
}

/**
 * JSON text with its `\uXXXX` escapes in lowercase hex, as JSON.stringify (ingest) writes them:
 * DuckDB's JSON writer spells a control character in a string `\u001B` where the stored text
 * has `\u001b`. Cut into escapes and the runs between them, so that an escaped backslash before
 * `u001F` (text, not an escape) stays as it is. Text with no escape is read as it is.
 */
function jsonEscapesAsCore(json: string): string {
  const pieces = `regexp_extract_all(${json}, ${sql("\\\\u[0-9A-Fa-f]{4}|\\\\.|[^\\\\]+")})`;
  return `CASE WHEN contains(${json}, '\\u') THEN array_to_string(list_transform(${pieces}, __e -> CASE WHEN starts_with(__e, '\\u') THEN lower(__e) ELSE __e END), '') ELSE ${json} END`;
}

/**
 * The STRING at `path` (a JSONPath or JSON Pointer literal) of JSON text `json`: a string
 * unquoted, a number, object or array as its JSON text in core's spelling, NULL when missing or null.
 */
export function jsonStringAt(json: string, path: string): string {
  const text = `json_extract_string(${json}, ${path})`;
  const nested = jsonEscapesAsCore(jsonExponentsAsCore(text));
  return `CASE json_type(${json}, ${path}) WHEN 'VARCHAR' THEN ${text} WHEN 'DOUBLE' THEN ${jsonExponentsAsCore(text)} WHEN 'ARRAY' THEN ${nested} WHEN 'OBJECT' THEN ${nested} ELSE ${text} END`;
}

/**
 * The elements of a JSON array as a list of STRING, each as jsonStringAt reads one. Text with no
 * exponent (`1e+21` as stored, `1e21` as DuckDB writes an array it read from a record's text)
 * has no number DuckDB would respell, and text without `\u` no escape: it takes the one-call path.
 */
export function jsonStringList(array: string): string {
  const each = `list_transform(json_extract(${array}, '$[*]'), __v -> ${jsonStringAt("__v", "'$'")})`;
  return `CASE WHEN regexp_matches(${array}, '[0-9]e|\\\\u') THEN ${each} ELSE json_extract_string(${array}, '$[*]') END`;
}

/**
 * JSON text with every number spelled as CAST AS STRING spells the INT64 or FLOAT64 it is, strings
 * untouched: JSON_QUERY of any JSON text (DuckDB writes `1.0`, `100.0` for `1E+2`, `-0.0`), as
 * PostgreSQL and ClickHouse spell it too.
 */
export function jsonNumbersAsCore(json: string): string {
  const pieces = `regexp_extract_all(${json}, ${sql('"(?:[^"\\\\]|\\\\.)*"|-?[0-9][0-9.eE+-]*|[^"0-9-]+|-')})`;
  const int64 = "TRY_CAST(__n AS BIGINT)";
  const double = "TRY_CAST(__n AS DOUBLE)";
  // a number past FLOAT64's range (DuckDB reads inf) makes the whole text NULL, as on ClickHouse,
  // which finds no JSON in it, and PostgreSQL
  const number = `CASE WHEN regexp_full_match(__n, '-?[0-9]+') AND ${int64} IS NOT NULL THEN CAST(${int64} AS VARCHAR) WHEN NOT isinf(${double}) THEN ${duckdbFloatText(double)} END`;
  const texts = `list_transform(${pieces}, __n -> CASE WHEN regexp_matches(__n, '^-?[0-9]') THEN ${number} ELSE __n END)`;
  return `CASE WHEN list_count(${texts}) = len(${texts}) THEN array_to_string(${texts}, '') END`;
}
