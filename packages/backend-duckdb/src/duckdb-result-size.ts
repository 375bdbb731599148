import {
  DuckDBArrayValue,
  DuckDBListValue,
  DuckDBMapValue,
  DuckDBStructValue,
  DuckDBUnionValue,
  type DuckDBValue,
} from "@duckdb/node-api";

/** what a value other than text counts: about its JSON on the wire */
const SCALAR = 8;

/**
 * About how many bytes a row's values take on the wire, for the bound on a result
 * (`MAX_RESULT_BYTES`): text by its length (UTF-16 units: bytes for the ASCII most results are),
 * lists, arrays, structs, maps and unions by what they hold — `array_agg` of 15,000 strings of
 * 10,000 characters is 150 MB inside one list value — anything else as a small scalar.
 * Iterative: a value's depth does not matter.
 */
export function rowSize(row: readonly DuckDBValue[]): number {
  let n = 0;
  const pending: DuckDBValue[] = [...row];
  while (pending.length > 0) {
    const v = pending.pop();
    if (typeof v === "string") n += v.length;
    else if (v instanceof DuckDBListValue || v instanceof DuckDBArrayValue) {
      n += SCALAR;
      for (const item of v.items) pending.push(item);
    } else if (v instanceof DuckDBStructValue) {
      for (const [key, item] of Object.entries(v.entries)) {
        n += key.length;
        pending.push(item);
      }
    } else if (v instanceof DuckDBMapValue) {
      for (const { key, value } of v.entries) pending.push(key, value);
    } else if (v instanceof DuckDBUnionValue) pending.push(v.value);
    else n += SCALAR;
  }
  return n;
}
