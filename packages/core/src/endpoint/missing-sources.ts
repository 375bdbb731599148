import { UnknownSourceError } from "../compile/analyze-from.ts";
import { compileEndpoint } from "../compile/compile-endpoint.ts";
import type { Dialect } from "../dialect/dialect.ts";
import { newSourceSchema } from "../schema/infer-schema.ts";
import type { LogSchema } from "../schema/schema-model.ts";
import { isCreatableSourceName } from "../schema/source-name.ts";
import type { EndpointDefinition } from "./endpoint-definition.ts";

/**
 * The sources stored queries read that the store does not hold yet and that ingest would create
 * (`isCreatableSourceName`), in the order met. `qes serve` creates them empty before it checks the
 * queries, so that a query may be written before its shippers send their first events, as it may
 * for the nine built-in sources (which exist, empty, from start-up). A name ingest would refuse
 * still fails the check. Departs from DESIGN.md §2, where any source the store lacks failed it.
 */
export function missingSources(
  definitions: readonly EndpointDefinition[],
  schema: LogSchema,
  dialect: Dialect,
): string[] {
  const missing: string[] = [];
  let trial = schema;
  for (const def of definitions) {
    // each failed compile names one more source; the query names finitely many
    for (;;) {
      try {
        compileEndpoint(def, { schema: trial, dialect });
        break;
      } catch (e) {
        if (!(e instanceof UnknownSourceError) || !isCreatableSourceName(e.source)) break;
        if (Object.hasOwn(trial.sources, e.source)) break;
        missing.push(e.source);
        trial = withEmptySources(trial, [e.source]);
      }
    }
  }
  return missing;
}

/** `schema` with an empty source of each name it lacks (what creating them would make) */
export function withEmptySources(schema: LogSchema, names: readonly string[]): LogSchema {
  const sources = { ...schema.sources };
  for (const name of names) {
    if (Object.hasOwn(sources, name)) continue;
    sources[name] = newSourceSchema(
      name,
      Object.values(sources).map((s) => s.table),
    );
  }
  return { ...schema, sources };
}

/**
 * A source `schema` holds whose name differs from `name` only by case or punctuation
 * (`Cloudflare.Logs.Prod`, `cloudflare-logs-prod` for `cloudflare.logs.prod`), or undefined. A
 * stored query's source that the store lacks is created empty, and source names are
 * case-sensitive: such a near miss is most likely a misspelling, which start-up and `qes check`
 * then name beside the source they create.
 */
export function lookalikeSource(name: string, schema: LogSchema): string | undefined {
  const fold = (n: string) => n.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ".");
  const folded = fold(name);
  return Object.keys(schema.sources).find((held) => held !== name && fold(held) === folded);
}
