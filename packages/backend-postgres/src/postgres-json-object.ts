/** arguments per `json_build_object` / `json_build_array` call: PostgreSQL passes at most 100 */
const ARGUMENTS_PER_CALL = 100;

/**
 * The JSON text of an object from key, value, key, value… arguments. Beyond 50 pairs, objects of
 * 50 are built and their texts joined (`{"a" : 1}` and `{"b" : 2}` into `{"a" : 1, "b" : 2}`),
 * keys in their order, so a STRUCT or a row of any width reads as on every engine.
 */
export function jsonObjectText(args: string[]): string {
  return joinedJson("json_build_object", args, "{", "}");
}

/** The JSON text of an array of the arguments (JSON values), of any length, the same way. */
export function jsonArrayText(args: string[]): string {
  return joinedJson("json_build_array", args, "[", "]");
}

function joinedJson(fn: string, args: string[], open: string, close: string): string {
  const call = (part: string[]) => `CAST(${fn}(${part.join(", ")}) AS text)`;
  if (args.length <= ARGUMENTS_PER_CALL) return call(args);
  const inner: string[] = [];
  for (let i = 0; i < args.length; i += ARGUMENTS_PER_CALL)
    inner.push(`left(substr(${call(args.slice(i, i + ARGUMENTS_PER_CALL))}, 2), -1)`);
  return `('${open}' || ${inner.join(" || ', ' || ")} || '${close}')`;
}
