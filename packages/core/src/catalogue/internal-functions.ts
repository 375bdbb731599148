/**
 * Calls the compiler itself writes into the query tree, never callable by name from user SQL
 * (their names start with `__`, which the lexer refuses). Each dialect's function table has a row
 * for each, like for a catalogue function, so a dialect without one fails `tsc -b`.
 */
export const INTERNAL_FUNCTIONS = {
  __ARRAY: "an engine list of its arguments: array literals `[a, b]`, APPROX_QUANTILES(x, n)",
  __ARRAY_AT: "the element at a 0-based index, NULL outside: subscripts `a[OFFSET(i)]`, `a[ORDINAL(i)]`",
  __CHECK_INDEX:
    "its first argument, an element at index (2nd) of an array of length (3rd), or BigQuery's error when the index is outside: `a[OFFSET(i)]`, `a[ORDINAL(i)]`",
  __ARRAY_CONTAINS: "whether an array holds a value: `x IN UNNEST(a)`",
  __ARRAY_TO_JSON: "an engine list as JSON text: arrays in the result, read by the wire conversion",
  __EXTRACT: "a date part of a TIMESTAMP, DATETIME or DATE: `EXTRACT(part FROM e)`",
  __JSON_ARRAY: "JSON text of an array of structs: `[STRUCT(…), STRUCT(…)]`",
  __JSON_OBJECT: "JSON text of a struct: `STRUCT(a AS x)`, a table alias used as a value",
  __JSON_WRAP_ARRAY: "JSON text of one struct as an array of one: UNNEST of a struct WITH OFFSET",
  __REDACT_ADDRESSES:
    "its argument with every IP address (redaction/address-pattern.ts) replaced by REDACTED, in a STRING, in the JSON text of a record or array, or in each string of a list: what consumer SQL reads from a stored CTE when redaction applies",
  __QUANTILE: "the k-th of n exact quantiles, an aggregate: APPROX_QUANTILES (special-forms.ts)",
} as const;

export type InternalFunctionName = keyof typeof INTERNAL_FUNCTIONS;

/**
 * The forms the desugaring passes (parse/desugar*.ts) write for constructs node-sql-parser cannot
 * read, as calls the analyser reads back (compile/analyze-internal.ts has one reader per name, typed
 * over this table). User SQL may not name them: `__qes_` is reserved.
 */
export const DESUGARED_FORMS = {
  __qes_subscript: "`x[OFFSET(n)]`, `x[ORDINAL(n)]`, `x[SAFE_OFFSET(n)]`, `x[n]`",
  __qes_path: "`x[…].field.field`: fields after a subscript",
  __qes_is_distinct: "`a IS DISTINCT FROM b`",
  __qes_is_not_distinct: "`a IS NOT DISTINCT FROM b`",
  __qes_at_time_zone: "`e AT TIME ZONE z`",
  __qes_array_agg: "ARRAY_AGG with DISTINCT, IGNORE NULLS, ORDER BY or LIMIT",
  __qes_string_agg: "STRING_AGG with DISTINCT, ORDER BY or LIMIT",
  __qes_distinct: "`SUM(DISTINCT x)`, AVG, MIN, MAX: DISTINCT in an aggregate other than COUNT",
  __qes_ignore_nulls:
    "`FIRST_VALUE(x IGNORE NULLS)`, LAST_VALUE, NTH_VALUE: a navigation window skipping NULLs",
  __qes_order: "one `ORDER BY` key inside ARRAY_AGG / STRING_AGG",
  __qes_limit: "`LIMIT n` inside ARRAY_AGG / STRING_AGG",
  __qes_float: "number literals the parser cannot read: `.25`, `1.5e3`",
  __qes_interval: "`INTERVAL n UNIT`",
  __qes_extract: "`EXTRACT(part FROM e)`",
  __qes_array: "array literals `[a, b]`",
  __qes_array_typed: "typed array literals `ARRAY<T>[a, b]`",
  __qes_array_subquery: "`ARRAY(SELECT …)`",
  __qes_nulls_first: "`e NULLS FIRST` in ORDER BY",
  __qes_nulls_last: "`e NULLS LAST` in ORDER BY",
} as const;

export type DesugaredFormName = keyof typeof DESUGARED_FORMS;

/** Names the desugaring passes write that are not calls. */
export const DESUGARED_MARKERS = {
  __qes_except: "`* EXCEPT (a)` written as the REPLACE entry `__qes_except AS a`",
  __qes_join_group: "the select list of a subquery made of a parenthesised join group",
  __qes_s: "string literal placeholders `'__qes_s<N>'`: the decoded value is kept aside",
} as const;

export function isDesugaredForm(name: string): name is DesugaredFormName {
  return Object.hasOwn(DESUGARED_FORMS, name);
}
