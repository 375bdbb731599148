import { clickhouseFloatText } from "./clickhouse-float-text.ts";
import { sqlString } from "./clickhouse-sql.ts";

/**
 * Text of values in JSON read as STRING, numbers in core's spelling (CAST AS STRING's, JavaScript's
 * `1e+21`). ClickHouse parses JSON and writes a number back in its own way — `1e21`, `-0`, and
 * 1.2345678901234568e20 as `123456789012345670000`, another double's digits — so a number is
 * spelled from the value its parser read, never from ClickHouse's text of it. A value then reads
 * the same in the engine (UNNEST, subscripts, ARRAY_TO_STRING, comparisons) as on the wire and on
 * DuckDB and PostgreSQL.
 */

/** JSON text cut into strings, numbers and the rest (every character in one piece) */
const JSON_PIECES = '"(?:[^"\\\\]|\\\\.)*"|-?[0-9][0-9.eE+-]*|[^"0-9-]+|-';

/** a JSON number's text as core spells the INT64 or FLOAT64 it is */
function numberText(t: string): string {
  return `if(match(${t}, '^-?[0-9]+$') AND isNotNull(toInt64OrNull(${t})), toString(toInt64OrNull(${t})), ${clickhouseFloatText(`toFloat64OrNull(${t})`)})`;
}

/**
 * JSON text of an object or array (ClickHouse's) with every number respelled as core spells it,
 * strings untouched. The numbers are read back from ClickHouse's text: exact for every number but
 * a double of 17 significant digits, which a record nested in an array rarely holds.
 */
export function jsonNumbersAsCore(json: string): string {
  const pieces = `extractAll(${json}, ${sqlString(JSON_PIECES)})`;
  return `arrayStringConcat(arrayMap(__t -> if(match(__t, '^-?[0-9]'), ifNull(${numberText("__t")}, __t), __t), ${pieces}))`;
}

/**
 * JSON text with its string escapes spelled as JSON.stringify (ingest) writes them: ClickHouse's
 * JSON writer spells a control character `\u001B` where the stored text has `\u001b`, and
 * escapes U+2028 and U+2029, which the stored text holds as they are. Cut into escapes and the
 * runs between them, so that an escaped backslash before `u2028` (text, not an escape) stays as
 * it is. Text with no escape is read as it is.
 */
function jsonEscapesAsCore(json: string): string {
  const pieces = `extractAll(${json}, ${sqlString("\\\\u[0-9A-Fa-f]{4}|\\\\.|[^\\\\]+")})`;
  const each = `multiIf(__e = '\\\\u2028', ${sqlString("\u2028")}, __e = '\\\\u2029', ${sqlString("\u2029")}, startsWith(__e, '\\\\u'), lower(__e), __e)`;
  return `if(position(${json}, '\\\\u') = 0, ${json}, arrayStringConcat(arrayMap(__e -> ${each}, ${pieces})))`;
}

/**
 * The STRING at `at` (`json, key, …` as JSONExtract takes them): a string unquoted, a number as
 * core spells it, an object or array as its JSON text, NULL when missing or null.
 */
export function jsonStringAt(at: string): string {
  const type = `JSONType(${at})`;
  return (
    `multiIf(${type} = 'String', JSONExtractString(${at}), ${type} = 'Null', NULL, ` +
    `${type} = 'Int64' OR (${type} = 'UInt64' AND JSONExtractUInt(${at}) <= 9223372036854775807), toString(JSONExtractInt(${at})), ` +
    `${type} IN ('UInt64', 'Double'), ${clickhouseFloatText(`JSONExtractFloat(${at})`)}, ` +
    `${type} = 'Bool', if(JSONExtractBool(${at}), 'true', 'false'), ` +
    `nullIf(${jsonEscapesAsCore(jsonNumbersAsCore(`JSONExtractRaw(${at})`))}, ''))`
  );
}

/**
 * The elements of a JSON array (text, NULL for none) as an Array(Nullable(String)), each as
 * jsonStringAt reads one. Text with neither an exponent nor 16 digits in a row holds no number
 * ClickHouse would respell, and text without `\u`, U+2028 or U+2029 no string it would escape
 * otherwise: it takes the one-call path.
 */
export function jsonStringList(array: string): string {
  const text = `ifNull(${array}, '')`;
  // each number read from its own text: JSONExtract of the whole array as Array(Nullable(Float64))
  // is empty when no element is a number (["req 1736938800123456"]), and arrayMap then refused
  // lists of different sizes
  const each =
    `arrayMap(__r -> multiIf(__r = 'null', NULL, startsWith(__r, '"'), JSONExtractString(__r), ` +
    // an integer's digits are exact in ClickHouse's text; a FLOAT64 is spelled from the parsed value
    `toString(JSONExtract(__r, 'Nullable(Int64)')) = __r, __r, ` +
    // an integer literal past 64 bits (JavaScript's 18446744073709552000) read as the double it is
    // (`readableJson`: simdjson gives up on the literal)
    `match(__r, '^-?[0-9]'), ${clickhouseFloatText("JSONExtract(if(match(__r, '^-?[0-9]+$'), concat(__r, '.0'), __r), 'Nullable(Float64)')")}, ` +
    `match(__r, '^[\\\\[{]'), ${jsonEscapesAsCore(jsonNumbersAsCore("__r"))}, __r), ` +
    `JSONExtractArrayRaw(${text}))`;
  return `if(match(${text}, ${sqlString("[0-9][eE]|[0-9]{16}|\\\\u|\u2028|\u2029")}), ${each}, JSONExtract(${text}, 'Array(Nullable(String))'))`;
}

/**
 * JSON text as simdjson reads it. simdjson reads every double exactly (RapidJSON, ClickHouse's
 * other parser, read one in eight random doubles as a neighbouring one: 111.33861541748047) but
 * gives up on a whole document holding an integer literal beyond 64 bits, which JavaScript writes
 * for doubles from 2^64 to 1e21 (1.8446744073709552e19 as 18446744073709552000). Such a literal
 * gets a `.0`, which makes it the same double; the text is cut into strings, numbers and the rest,
 * so no string changes. Text without 20 digits in a row is read as it is.
 */
export function readableJson(text: string): string {
  const pieces = `extractAll(${text}, ${sqlString(JSON_PIECES)})`;
  return `if(match(${text}, '[0-9]{20}'), arrayStringConcat(arrayMap(__j -> if(match(__j, '^-?[0-9]{20,}$'), concat(__j, '.0'), __j), ${pieces})), ${text})`;
}
