import { inPlace, jsNumberTextSql, type Once } from "@qes/core";

/**
 * The shortest text of `abs(col)` (a float8) that reads back as the same double, as JavaScript
 * finds it. float8out's Ryu does not take a decimal that lies exactly on the rounding boundary
 * (3.21157e20 prints as `3.2115699999999997e+20`, 1e23 as `9.999999999999999e+22`): when it
 * gives 16 or more digits, the value rounded to 15 (`float8::numeric`, checked to read back and
 * to stay within float8's range) is used instead, whose trailing zeros go.
 */
export function shortestFloatText(col: string): string {
  const ryu = `abs(${col})::text`;
  const digits = `length(ltrim(replace(split_part(${ryu}, 'e', 1), '.', ''), '0'))`;
  const fifteen = `abs(${col})::numeric`;
  const fifteenText = `regexp_replace(trim(to_char(${fifteen}, '9.99999999999999EEEE')), '\\.?0*e', 'e')`;
  return (
    `CASE WHEN ${digits} >= 16 AND ${fifteen} <= 1.7976931348623157e308 AND ${fifteen}::float8 = abs(${col}) ` +
    `THEN ${fifteenText} ELSE ${ryu} END`
  );
}

/**
 * CAST(FLOAT64 AS STRING): a finite value spelled as core spells a number (`String(number)`: `1`,
 * `1e+21`, `0.000025`), as DuckDB and ClickHouse spell it too; NaN and the infinities as BigQuery
 * does (`nan`, `inf`, `-inf`). Needs `extra_float_digits` > 0 (PostgreSQL's default) for the
 * shortest digits. `once` binds what it names many times (a query's `SqlEmitter.once`: one level
 * was 196 KB of SQL written in place, two 457 MB).
 */
export function postgresFloatText(x: string, once: Once = inPlace): string {
  return once(
    x,
    (v) =>
      `CASE WHEN ${v} = 'NaN'::float8 THEN 'nan' WHEN ${v} = 'Infinity'::float8 THEN 'inf' ` +
      `WHEN ${v} = '-Infinity'::float8 THEN '-inf' ELSE ${jsNumberTextSql(v, shortestFloatText(v), "text", once)} END`,
  );
}

/**
 * JSON_VALUE's text of a JSON number (`token`, its text as written): the INT64 or FLOAT64 it is
 * read as (DESIGN.md §3), spelled as CAST(… AS STRING) spells it — as DuckDB and ClickHouse,
 * which parse the number and keep no text of it, spell it too: `1.0` is `1`, `1E+2` `100`,
 * `-0.0` `0`, `1e21` `1e+21`, an integer beyond INT64 a FLOAT64. A number past FLOAT64's range
 * is NULL, as ClickHouse, which finds no JSON in such text, answers (a cast to float8 raised);
 * below its least one it is `0`.
 */
export function postgresJsonNumberText(token: string, once: Once = inPlace): string {
  const n = `CAST(${token} AS numeric)`;
  return (
    `CASE WHEN ${token} ~ '^-?[0-9]+$' AND ${n} BETWEEN -9223372036854775808 AND 9223372036854775807 ` +
    `THEN CAST(CAST(${token} AS bigint) AS text) ` +
    `WHEN abs(${n}) > 1.7976931348623158e308 THEN NULL ` +
    `WHEN abs(${n}) < 2.4703282292062328e-324 THEN '0' ` +
    `ELSE ${postgresFloatText(`CAST(${token} AS float8)`, once)} END`
  );
}

/** JSON text cut into strings, numbers and the rest (every character in one piece) */
export const JSON_PIECES = String.raw`"(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*|[^"0-9-]+|-`;

/**
 * JSON text (`json`, SQL text) with every number as postgresJsonNumberText spells it and every
 * string written anew: JSON_QUERY's numbers and strings as DuckDB and ClickHouse, which keep no
 * text of either, spell them too (`"\u00e9"` is `"é"`, as BigQuery writes it). A string holding
 * `\u0000`, which PostgreSQL's text cannot, stays as it is. `pattern` is JSON_PIECES as a SQL literal.
 */
export function postgresJsonNumbersAsCore(json: string, pattern: string): string {
  const piece = "qes_jp.t[1]";
  const string = `CASE WHEN ${piece} ~ '\\u0000' THEN ${piece} ELSE CAST(to_json(CAST(${piece} AS json) #>> '{}') AS text) END`;
  const text = `CASE WHEN ${piece} ~ '^-?[0-9]' THEN ${postgresJsonNumberText(piece)} WHEN ${piece} LIKE '"%' THEN ${string} ELSE ${piece} END`;
  // a number past FLOAT64's range (NULL) makes the whole text NULL, as on DuckDB and ClickHouse
  return `(SELECT CASE WHEN count(${text}) = count(*) THEN string_agg(${text}, '' ORDER BY qes_jp.n) END FROM regexp_matches(${json}, ${pattern}, 'g') WITH ORDINALITY AS qes_jp(t, n))`;
}
