import { type Backend, type CompiledQuery, QesError } from "@qes/core";

/**
 * Whether the engine refused `compiled` as invalid SQL because it was compiled for a model the
 * store has since left: another instance's widening retyped or dropped a column under it within
 * the second this process trusts the model it last read (`text >= bigint`, a 422 for a query that
 * is valid). Asks the store for its model now; only a refusal (`sql_invalid`) is asked about.
 */
export async function compiledForOldModel(
  backend: Backend,
  compiled: CompiledQuery,
  error: unknown,
): Promise<boolean> {
  if (!(error instanceof QesError) || error.code !== "sql_invalid") return false;
  const schema = await backend.schema({ fresh: true }).catch(() => undefined);
  return schema !== undefined && schema.version !== compiled.schemaVersion;
}
