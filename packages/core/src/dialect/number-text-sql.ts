import { inPlace, type Once } from "./bind-once.ts";

/**
 * SQL that spells a stored FLOAT64 as core spells a number when it shapes an event into a STRING
 * column (`textOfJsonValue`: JavaScript's `String(number)`), for a widening FLOAT64 → STRING to
 * leave old rows as a new request would have written them, on every backend.
 *
 * JavaScript writes the shortest digits that read back as the same double, in fixed notation when
 * the decimal exponent is within [-7, 21) (`0.00005`, `9007199254740992`, `100000000000000000000`)
 * and as `d.ddde±x` otherwise (`5e-7`, `1e+21`, `1.5e-300`); -0 is `0`. An engine's cast gives the
 * same shortest digits but its own notation, so the dialect hands over its text of `abs(value)`
 * and this rewrites only the notation.
 *
 * `absText` must be the engine's shortest round-trip text of `abs(value)` in one of two shapes:
 * fixed, with no trailing zero after the point except an optional `.0` (`123.0`, `0.0001`), used
 * only within the fixed range above; or `d[.ddd]e±x` with an optional sign and zero padding on the
 * exponent (`1e+300`, `5e-05`). DuckDB's and PostgreSQL's (`extra_float_digits` > 0) casts are
 * such texts. The SQL uses only functions both engines have (`split_part`, `replace`, `repeat`,
 * `left`, `substr`, `regexp_replace`, `length`, `abs`, CAST to INTEGER and to the `text` type).
 * `once` binds `absText`, which the rewrite names some twenty times (a query's `SqlEmitter.once`).
 */
export function jsNumberTextSql(
  value: string,
  absText: string,
  textType: string,
  once: Once = inPlace,
): string {
  return once(absText, (a) => numberText(value, a, textType));
}

/** jsNumberTextSql of a bound `absText`, which it names some twenty times */
function numberText(value: string, absText: string, textType: string): string {
  const mantissa = `split_part(${absText}, 'e', 1)`;
  const exponentText = `split_part(${absText}, 'e', 2)`;
  // NULL for a fixed text: no branch below casts an empty string
  const exponent = `CAST(nullif(${exponentText}, '') AS INTEGER)`;
  const digits = `replace(${mantissa}, '.', '')`;
  const point = `(${exponent} + 1)`;
  const unsigned =
    `CASE WHEN ${exponentText} = '' THEN regexp_replace(${absText}, '\\.0$', '') ` +
    // outside the fixed range: the engine's mantissa, JavaScript's exponent (signed, unpadded)
    `WHEN ${exponent} >= 21 OR ${exponent} <= -7 THEN ${mantissa} || 'e' || ` +
    `CASE WHEN ${exponent} > 0 THEN '+' ELSE '-' END || CAST(abs(${exponent}) AS ${textType}) ` +
    `WHEN ${exponent} < 0 THEN '0.' || repeat('0', -${exponent} - 1) || ${digits} ` +
    `WHEN length(${digits}) <= ${point} THEN ${digits} || repeat('0', ${point} - length(${digits})) ` +
    `ELSE left(${digits}, ${point}) || '.' || substr(${digits}, ${point} + 1) END`;
  // the sign apart, so that the rewrite is written once: twice, it doubled the SQL of every JSON
  // function (DuckDB plans each copy: ~35 ms per JSON_QUERY on a one-row table)
  return `CASE WHEN ${value} IS NULL THEN NULL ELSE CASE WHEN ${value} < 0 THEN '-' ELSE '' END || ${unsigned} END`;
}
