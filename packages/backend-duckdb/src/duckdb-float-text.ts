import { jsNumberTextSql } from "@qes/core";

/** core's spelling of a DOUBLE (`String(number)`) from DuckDB's shortest text of its magnitude */
export function duckdbNumberText(x: string): string {
  return jsNumberTextSql(x, `CAST(abs(${x}) AS VARCHAR)`, "VARCHAR");
}

/**
 * CAST(FLOAT64 AS STRING): a finite value spelled as core spells a number (`1`, `1e+21`,
 * `0.000025`; DuckDB's own cast writes `1.0`, `1e+21`, `2.5e-05`), as PostgreSQL and ClickHouse
 * spell it too; NaN and the infinities as BigQuery does (`nan`, `inf`, `-inf`).
 */
export function duckdbFloatText(x: string): string {
  return (
    `CASE WHEN isnan(${x}) THEN 'nan' WHEN isinf(${x}) THEN CASE WHEN ${x} > 0 THEN 'inf' ELSE '-inf' END ` +
    `ELSE ${duckdbNumberText(x)} END`
  );
}
