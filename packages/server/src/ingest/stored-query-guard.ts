import {
  compileEndpoint,
  type Dialect,
  type EndpointDefinition,
  type FieldNode,
  isQesError,
  type LogSchema,
  missingSources,
  type SchemaChange,
  type SourceSchema,
  withEmptySources,
} from "@qes/core";
import { eventRefusal } from "./event-refusal.ts";
import type { Widening } from "./schema-widenings.ts";

/** why a widening is refused: the change, and the stored query it would break */
export interface StoredQueryBreak {
  /** `field "metadata.request" would change from RECORD to STRING` */
  change: string;
  /** the stored query that would stop compiling */
  endpoint: string;
  /** its compiler's message: names the query's columns, so it is the operator's to read */
  reason: string;
}

export interface StoredQueryGuardOptions {
  /** the stored queries being served */
  definitions: () => readonly EndpointDefinition[];
  dialect: Dialect;
}

/**
 * Keeps ingest from breaking the stored queries being served. Ingest widens a source's schema as
 * a load does (DESIGN.md §3: a conflict widens to STRING), and a widening can take a field out
 * from under a stored query: `metadata.request` sent once as a number turns the record every
 * usage counter unnests into a STRING, the query stops compiling, and the server would refuse to
 * start again. So before a batch is queued, every event that would change the source's schema is
 * tried against the served definitions: one that would make a definition that compiles today
 * stop compiling refuses the request with 400 `invalid_event`, naming the event and the field
 * (nothing of the request is stored). The answer does not name the stored query nor say why it
 * would break: an ingest token may not run queries, and their names and columns are not its to
 * learn (any caller's answer is the same). The server log has them, under the request's id
 * (`QesError.logged`). Events the schema already covers, the great majority, are not among the
 * widenings and cost no compilation.
 */
export class StoredQueryGuard {
  readonly #opts: StoredQueryGuardOptions;
  /**
   * The store's schema of this version as the served definitions meet it (`served`: with the
   * sources they read that it lacks, empty) and the definitions that compile against it (the
   * ones to protect).
   */
  #compiling: { version: number; schema: LogSchema; served: LogSchema; names: Set<string> } | undefined;

  constructor(opts: StoredQueryGuardOptions) {
    this.#opts = opts;
  }

  /** `widenings`: the request's schema steps (schema-widenings.ts) over `schema`, the store's */
  check(schema: LogSchema, source: string, widenings: readonly Widening[]): void {
    const last = widenings.at(-1);
    // Queries only ever meet the schema after the last step (the request commits whole), so the
    // served definitions are compiled against that one; a request of 200 new fields compiled
    // them 200 times (1.4 s of the server's thread instead of 0.3 s). Only a refusal looks for
    // the step that did it, to name its event: by bisection, as the steps only ever widen.
    if (last === undefined || this.refusal(schema, source, last) === undefined) return;
    let clean = -1;
    let broken = widenings.length - 1;
    while (broken - clean > 1) {
      const mid = (clean + broken) >> 1;
      if (this.refusal(schema, source, widenings[mid]!) === undefined) clean = mid;
      else broken = mid;
    }
    const step = widenings[broken]!;
    const found = this.refusal(schema, source, step) as StoredQueryBreak;
    throw eventRefusal(step.index, step.line, unnamedRefusal(found), {
      logged: { source, storedQuery: found.endpoint, reason: found.reason },
    });
  }

  /**
   * Why one widening of `source` may not be made over `schema` (the store's), or undefined when
   * every stored query that compiles now still compiles after it. `qes load` asks this of each
   * widening its load makes (core's `WideningCheck`), the ingest route through `check`.
   */
  refusal(
    schema: LogSchema,
    source: string,
    { before, after, changes }: Pick<Widening, "before" | "after" | "changes">,
  ): StoredQueryBreak | undefined {
    // A source the store lacks that a stored query reads is one `qes serve` creates, empty, for
    // it (`missingSources`), and `qes check` passes the query against that: a first load of it
    // (before any serve) whose shape the query cannot take broke it, and serve then refused to start.
    const { served } = this.#compilingNow(schema);
    // a source no definition reads: nothing to protect
    if (served.sources[source] === undefined) return undefined;
    const broken = this.#firstBroken(schema, {
      ...served,
      sources: { ...served.sources, [source]: after },
    });
    if (broken === undefined) return undefined;
    return { change: describeChanges(changes, before, after), endpoint: broken.name, reason: broken.reason };
  }

  /** the first served definition that compiles against `schema` but not against `candidate` */
  #firstBroken(schema: LogSchema, candidate: LogSchema): { name: string; reason: string } | undefined {
    const compiling = this.#compilingNow(schema).names;
    for (const def of this.#opts.definitions()) {
      if (!compiling.has(def.name)) continue;
      try {
        compileEndpoint(def, { schema: candidate, dialect: this.#opts.dialect });
      } catch (e) {
        if (!isQesError(e)) throw e;
        return { name: def.name, reason: e.message.replace(/\.$/, "") };
      }
    }
    return undefined;
  }

  #compilingNow(schema: LogSchema): { served: LogSchema; names: Set<string> } {
    const known = this.#compiling;
    if (known && known.version === schema.version && known.schema === schema) return known;
    const { dialect } = this.#opts;
    // one list for both passes: finding the missing sources compiles each definition, which the
    // pass below then finds in core's cache (the schema is the same object) when none is missing
    const definitions = this.#opts.definitions();
    const missing = missingSources(definitions, schema, dialect);
    const served = missing.length === 0 ? schema : withEmptySources(schema, missing);
    const names = new Set<string>();
    for (const def of definitions) {
      try {
        compileEndpoint(def, { schema: served, dialect });
        names.add(def.name);
      } catch {
        // broken already (a load did it): not this request's doing
      }
    }
    this.#compiling = { version: schema.version, schema, served, names };
    return this.#compiling;
  }
}

/** a refusal as the operator reads it (`qes load` on the store's own files): the stored query and why */
export function namedRefusal({ change, endpoint, reason }: StoredQueryBreak): string {
  return `${change}, and the stored query ${endpoint} could no longer run (${reason}). ${SEND_ANOTHER_WAY}`;
}

/** a refusal as an ingest caller reads it: the field and its change, not the query that needs it */
export function unnamedRefusal({ change }: StoredQueryBreak): string {
  return (
    `${change}, and a stored query this server runs depends on the field's type ` +
    `(the server log names it under this request's id). ${SEND_ANOTHER_WAY}`
  );
}

const SEND_ANOTHER_WAY = "Send the field with the type it has, or under another name.";

/** `field "metadata.request" would change from RECORD to STRING` (the first change that alters a field) */
function describeChanges(changes: SchemaChange[], before: SourceSchema, after: SourceSchema): string {
  const altered = changes.find((c) => c.op !== "add_column") ?? changes[0];
  const path = altered?.path ?? [];
  const was = nodeAt(before.fields, path);
  const becomes = nodeAt(after.fields, path);
  const name = `field "${path.join(".")}"`;
  if (was === undefined) return `${name} would be added as ${typeName(becomes)}`;
  return `${name} would change from ${typeName(was)} to ${typeName(becomes)}`;
}

function nodeAt(fields: Record<string, FieldNode>, path: string[]): FieldNode | undefined {
  let node: FieldNode | undefined;
  let level: Record<string, FieldNode> | undefined = fields;
  for (const part of path) {
    node = level && Object.hasOwn(level, part) ? level[part] : undefined;
    level = node?.fields;
  }
  return node;
}

function typeName(node: FieldNode | undefined): string {
  if (node === undefined) return "nothing";
  switch (node.kind) {
    case "scalar":
      return node.type ?? "STRING";
    case "array":
      return `ARRAY<${node.type ?? "STRING"}>`;
    default:
      return "RECORD";
  }
}
