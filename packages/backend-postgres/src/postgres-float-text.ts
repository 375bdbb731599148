import { jsNumberTextSql } from "@qes/core";

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
 * shortest digits.
 */
export function postgresFloatText(x: string): string {
  return (
    `CASE WHEN ${x} = 'NaN'::float8 THEN 'nan' WHEN ${x} = 'Infinity'::float8 THEN 'inf' ` +
    `WHEN ${x} = '-Infinity'::float8 THEN '-inf' ELSE ${jsNumberTextSql(x, shortestFloatText(x), "text")} END`
  );
}
