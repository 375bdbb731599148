import type { Dialect } from "../dialect/dialect.ts";
import type { EndpointDefinition } from "../endpoint/endpoint-definition.ts";
import { QesError } from "../errors.ts";
import { type AstNode, parseSelect } from "../parse/parse-sql.ts";
import type { LogSchema } from "../schema/schema-model.ts";
import { analyzeQuery, analyzeWith } from "./analyze-query.ts";
import { CompileContext, MAX_EMITTED_SQL_CHARS } from "./compile-context.ts";
import type { CompiledQuery, OutputColumn } from "./compiled-query.ts";
import { fixedChoices } from "./fixed-choices.ts";
import type { Expr, Query } from "./ir.ts";
import { redactStoredCtes } from "./redact-stored-ctes.ts";
import { valueType } from "./scope.ts";
import { INT64, wireTypeOf } from "./sql-type.ts";

export interface CompileOptions {
  schema: LogSchema;
  dialect: Dialect;
  /** consumer SQL (`sql` parameter): replaces the stored query's final SELECT */
  consumerSql?: string;
  /**
   * the request is redacted: consumer SQL then reads the stored CTEs with every address already
   * replaced inside the engine (redact-stored-ctes.ts). Without consumer SQL it changes nothing.
   */
  redact?: boolean;
  /**
   * the request's parameters: those with `allowed` values are compiled as the chosen value's
   * literal (fixed-choices.ts), one compiled query per choice. Without them (`qes check`, start-up
   * checks) every parameter stays a parameter.
   */
  params?: Readonly<Record<string, string | undefined>>;
}

const CACHE_LIMIT = 1000;
// Compiled queries are cached per schema object: two backends (or two PostgreSQL schemas) may
// share a version number while their physical columns differ.
/** a compiled query, or the refusal the same inputs always get (QesError: compilation is pure) */
const compiledBySchema = new WeakMap<LogSchema, Map<string, CompiledQuery | QesError>>();
const parsed = new Map<string, AstNode>();

/**
 * Compiles an endpoint (and optional consumer SQL) for one dialect: parse → sandbox → semantic
 * rewrite → emit. Cached per schema, endpoint version, dialect and consumer SQL.
 */
export function compileEndpoint(endpoint: EndpointDefinition, opts: CompileOptions): CompiledQuery {
  const fixed = fixedChoices(endpoint, opts.params);
  const key = JSON.stringify([
    endpoint.id,
    endpoint.version,
    opts.schema.version,
    opts.dialect.name,
    opts.consumerSql ?? null,
    redactsInEngine(opts),
    [...fixed],
  ]);
  let compiled = compiledBySchema.get(opts.schema);
  if (!compiled) {
    compiled = new Map();
    compiledBySchema.set(opts.schema, compiled);
  }
  const hit = compiled.get(key);
  if (hit) {
    compiled.delete(key);
    compiled.set(key, hit);
    if (hit instanceof QesError) throw hit;
    return hit;
  }
  // A refusal is kept like a result: a caller repeating refused consumer SQL (an attacker's list)
  // would otherwise have it parsed and analysed again each time (soak profile: ~3 s of 35 s).
  let result: CompiledQuery | QesError;
  try {
    result = compileUncached(endpoint, opts, fixed);
  } catch (e) {
    if (!(e instanceof QesError)) throw e;
    result = e;
  }
  compiled.set(key, result);
  if (compiled.size > CACHE_LIMIT) compiled.delete(compiled.keys().next().value as string);
  if (result instanceof QesError) throw result;
  return result;
}

function redactsInEngine(opts: CompileOptions): boolean {
  return opts.redact === true && opts.consumerSql !== undefined;
}

function parseCached(endpoint: EndpointDefinition): AstNode {
  const key = `${endpoint.id}:${endpoint.version}`;
  let ast = parsed.get(key);
  if (!ast) {
    ast = parseSelect(endpoint.sql);
    parsed.set(key, ast);
    if (parsed.size > CACHE_LIMIT) parsed.delete(parsed.keys().next().value as string);
  }
  return ast;
}

function compileUncached(
  endpoint: EndpointDefinition,
  opts: CompileOptions,
  fixed: ReadonlyMap<string, string>,
): CompiledQuery {
  const stored = parseCached(endpoint);
  const ctx = CompileContext.forEndpoint(endpoint, opts.schema, "stored", fixed);
  let analyzed: ReturnType<typeof analyzeQuery>;
  let storedCtes: Query["ctes"] = [];
  if (opts.consumerSql === undefined) {
    analyzed = analyzeQuery(stored, ctx, { final: true, ctes: new Map() });
  } else {
    if (!endpoint.sandboxable) {
      throw new QesError(
        "sql_not_allowed",
        `Endpoint ${endpoint.name} does not accept consumer SQL (query sandboxing is disabled).`,
        {
          param: "sql",
        },
      );
    }
    const consumer = parseSelect(opts.consumerSql);
    const { ctes, list } = analyzeWith(stored, ctx, new Map());
    storedCtes = list;
    ctx.mode = "consumer";
    analyzed = analyzeQuery(consumer, ctx, { final: true, ctes });
  }
  const query = analyzed.query;
  query.ctes = [...storedCtes, ...query.ctes];
  if (redactsInEngine(opts)) redactStoredCtes(query, storedCtes, ctx);
  // Engine lists leave as JSON text, which the wire conversion reads like arrays from events.
  for (const branch of analyzed.branches) {
    for (const item of branch.select.items) {
      if (item.expr.type.t === "array" && item.expr.type.native) {
        item.expr = {
          k: "call",
          fn: "__ARRAY_TO_JSON",
          args: [item.expr],
          type: { ...item.expr.type, native: false },
        };
      }
    }
  }
  capRows(query, endpoint.maxRows + 1);
  const columns: OutputColumn[] = analyzed.outputs.map((o, i) => ({
    name: o.name,
    type: wireTypeOf(valueType(analyzed.branches[0]!.values[i]!)),
  }));
  const seen = new Set<string>();
  for (const c of columns) {
    if (seen.has(c.name))
      throw new QesError(
        "sql_invalid",
        `The result has two columns named ${c.name}; give them distinct aliases.`,
      );
    seen.add(c.name);
  }
  // Only the parameters the emitted SQL uses are bound: consumer SQL that reads no stored CTE
  // (`select 1 as x`) has none, and an engine refuses values for parameters it does not see.
  const emitted = emitWithinLimit(opts.dialect, query);
  return {
    sql: emitted.sql,
    ...(emitted.readAhead !== undefined ? { readAhead: emitted.readAhead } : {}),
    ...(emitted.cutFirst !== undefined ? { cutFirst: emitted.cutFirst } : {}),
    params: emitted.params.map((index) => ctx.params[index - 1]!),
    columns,
    schemaVersion: opts.schema.version,
    dialect: opts.dialect.name,
    patternParams: [...ctx.patternParams],
    ...(opts.dialect.bindPattern ? { bindPattern: (p: string) => opts.dialect.bindPattern!(p) } : {}),
    ...(opts.dialect.bindZone ? { bindZone: (z: string) => opts.dialect.bindZone!(z) } : {}),
  };
}

/** The dialect's SQL of the query, refused past MAX_EMITTED_SQL_CHARS (or past a string's length) */
function emitWithinLimit(dialect: Dialect, query: Query): ReturnType<Dialect["emit"]> {
  const tooLarge = (size: string) =>
    new QesError(
      "sql_too_complex",
      `The query compiles to ${size} of SQL for this backend; the limit is ${MAX_EMITTED_SQL_CHARS / 1_000_000} MB. ` +
        "Functions nested in one another (JSON_VALUE of JSON_VALUE, time functions in a zone) multiply it: " +
        "compute the inner value once, in a subquery or a WITH clause.",
    );
  let emitted: ReturnType<Dialect["emit"]>;
  try {
    emitted = dialect.emit(query);
  } catch (e) {
    if (e instanceof RangeError && /string length/i.test(e.message)) throw tooLarge("more than 500 MB");
    throw e;
  }
  if (emitted.sql.length > MAX_EMITTED_SQL_CHARS)
    throw tooLarge(`${(emitted.sql.length / 1_000_000).toFixed(1)} MB`);
  return emitted;
}

/** Results beyond maxRows are cut (the response says so): fetch one more row to know. */
function capRows(query: Query, cap: number): void {
  const body = query.body;
  const capLit: Expr = { k: "lit", value: cap, type: INT64 };
  if (!body.limit) body.limit = capLit;
  else if (body.limit.k === "lit" && Number(body.limit.value) > cap) body.limit = capLit;
  else if (body.limit.k !== "lit") {
    body.limit = { k: "call", fn: "LEAST", args: [body.limit, capLit], type: INT64 };
  }
}
