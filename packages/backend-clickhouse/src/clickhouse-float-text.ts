/**
 * ClickHouse's text of a Float64 (`toString`, or a column's values after MODIFY to String) spelled
 * as core spells a number (`String(number)`): the exponent signed (`1e+21`), `-0` as `0`.
 * ClickHouse writes the same shortest digits and fixed notation within JavaScript's range.
 */
export function floatTextAsCore(text: string): string {
  return `if(${text} = '-0', '0', replaceRegexpOne(${text}, 'e([0-9])', 'e+\\\\1'))`;
}

/**
 * CAST(FLOAT64 AS STRING), as DuckDB and PostgreSQL spell it too: core's spelling of a finite
 * value, and BigQuery's `nan`, `inf`, `-inf` (ClickHouse's own for those).
 */
export function clickhouseFloatText(x: string): string {
  return `if(isNaN(${x}), 'nan', ${floatTextAsCore(`toString(${x})`)})`;
}
