/** pairs per `json_build_object` call: PostgreSQL passes at most 100 arguments to a function */
const OBJECT_PAIRS_PER_CALL = 50;

/**
 * The JSON text of an object from key, value, key, value… arguments. Beyond 50 pairs, objects of
 * 50 are built and their texts joined (`{"a" : 1}` and `{"b" : 2}` into `{"a" : 1, "b" : 2}`),
 * keys in their order, so a STRUCT or a row of any width reads as on every engine.
 */
export function jsonObjectText(args: string[]): string {
  const call = (part: string[]) => `CAST(json_build_object(${part.join(", ")}) AS text)`;
  const per = OBJECT_PAIRS_PER_CALL * 2;
  if (args.length <= per) return call(args);
  const inner: string[] = [];
  for (let i = 0; i < args.length; i += per)
    inner.push(`left(substr(${call(args.slice(i, i + per))}, 2), -1)`);
  return `('{' || ${inner.join(" || ', ' || ")} || '}')`;
}
