/**
 * How an engine evaluates an expression once and names it inside another: a lambda over a list of
 * one element (DuckDB's `list_transform`, ClickHouse's `arrayMap`), and the longest value it is
 * cheaper to repeat than to bind.
 */
export interface OnceBinding {
  /** values this long or shorter (a column, a parameter) are written where they are used */
  inlineChars: number;
  /** SQL of `body`, in which `name` is `value` */
  bind(name: string, value: string, body: string): string;
  /** whether `bind` can hold this body (DuckDB's lambdas refuse a subquery): else `value` is written in place */
  holds?(body: string): boolean;
}

/** How SQL builders outside an emitter bind a value (SqlEmitter.once, or `inPlace`). */
export type Once = (value: string, body: (v: string) => string) => string;

/**
 * A value written where it is used: for SQL a statement cannot bind in (DDL's `ALTER … USING`,
 * where PostgreSQL refuses a subquery), and for what is short.
 */
export const inPlace: Once = (value, body) => body(value);

/**
 * `body` of `value`, which it names several times, with `value` written once when it is long.
 * Time-zone arithmetic names its input up to eight times, so each nesting level multiplied the
 * SQL: a TIMESTAMP_TRUNC in a zone of one in a zone was 1 MB of SQL and seconds of planning, three
 * levels 130 MB, four past JavaScript's longest string (a hostile query's way to a 500). Bound,
 * each level adds what it writes itself. The name is the value's hash: lambdas nest, and an inner
 * one must not hide the name of an outer one its body may read.
 */
export function bindOnce(value: string, body: (v: string) => string, binding: OnceBinding): string {
  if (value.length <= binding.inlineChars) return body(value);
  const name = `qes_once_${fnv1a(value)}`;
  const named = body(name);
  if (binding.holds !== undefined && !binding.holds(named)) return body(value);
  return binding.bind(name, value, named);
}

function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(36);
}
