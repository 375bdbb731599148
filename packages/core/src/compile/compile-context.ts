import type { EndpointDefinition, ParamSpec } from "../endpoint/endpoint-definition.ts";
import { QesError } from "../errors.ts";
import { type AstNode, locationOf } from "../parse/parse-sql.ts";
import type { LogSchema } from "../schema/schema-model.ts";
import type { SqlParam } from "./compiled-query.ts";
import type { Cte, OrderItem } from "./ir.ts";
import type { DerivedOutput, DerivedRelation, Value } from "./scope.ts";
import { INT64, type SqlType, STRING, TIMESTAMP } from "./sql-type.ts";

/** A CTE as later FROM items see it. */
export interface CteInfo {
  name: string;
  cte: Cte;
  derived: DerivedRelation;
  outputs: DerivedOutput[];
  /** output values in the CTE's own scope (records resolve through them) */
  values: Value[];
  /** the CTE ends in ORDER BY without LIMIT: its order, kept by a final SELECT over it */
  order?: OrderItem[];
  /** relations its body joins, which a reference to it brings into the graph that reads it */
  relations?: number;
  /** CTEs in the longest chain it reads through, itself included (MAX_NESTING) */
  chain?: number;
}

export const MAX_NESTING = 64;

/**
 * Queries of one chain of UNION ALL / UNION DISTINCT / EXCEPT / INTERSECT. PostgreSQL plans such a
 * chain in quadratic time (measured: 500 branches 1 s, 1,000 3 s, 3,000 about 30 s of one core),
 * so a chain longer than this is `sql_too_complex`, on every backend alike.
 */
export const MAX_SET_OPERANDS = 256;

/**
 * Columns of one SELECT list after `*` is expanded. PostgreSQL refuses more than 1,664; DuckDB
 * ran out of memory sorting 3,000 string columns of a CTE. Beyond it: `sql_too_complex`.
 */
export const MAX_SELECT_COLUMNS = 1000;

/**
 * Relations (sources, CTE references — a CTE counted as the relations it reads — and UNNESTs of
 * arrays) in one join graph: a SELECT's FROM items with the subqueries the engines flatten into
 * it. DuckDB searches join orders without heeding an interrupt — measured on 3-row tables: 50
 * joins 0.3 s, 100 4.5 s, 150 27 s, 300 many minutes, past the query timeout and past the client,
 * holding a slot of the engine; over 5,000 rows, a CTE cross-joined with 20 UNNESTs 0.14 s, with
 * 24 over 1 s, with 30 past a 30 s timeout. Beyond it: `sql_too_complex`. The branches of a set
 * operation are graphs of their own, and the whole operation one relation of the graph around it.
 */
export const MAX_JOINED_RELATIONS = 16;

/**
 * Characters of the SQL one query compiles to. Functions whose emitted SQL names an argument
 * several times multiply it with each level they nest (JSON_VALUE of JSON_VALUE of JSON_VALUE was
 * 107 MB on DuckDB and past JavaScript's longest string on PostgreSQL, a 500): engines took seconds
 * to plan a few megabytes. Beyond it: `sql_too_complex`.
 */
export const MAX_EMITTED_SQL_CHARS = 4_000_000;

/** State of one compilation: parameters, generated names, limits. */
export class CompileContext {
  readonly params: SqlParam[] = [];
  readonly patternParams = new Set<string>();
  readonly referenced = new Set<string>();
  private readonly paramIndex = new Map<string, number>();
  private aliasCounter = 0;
  depth = 0;
  /** relations of the join graph being analysed (MAX_JOINED_RELATIONS) */
  private joined = 0;
  /** the longest chain of CTEs the query being analysed reads through */
  private chainRead = 0;

  constructor(
    readonly schema: LogSchema,
    readonly paramSpecs: Record<string, ParamSpec>,
    public mode: "stored" | "consumer",
    readonly endpointName: string,
    /** parameters compiled as the literal of their allowed value (fixed-choices.ts) */
    readonly fixed: ReadonlyMap<string, string> = new Map(),
  ) {}

  static forEndpoint(
    endpoint: EndpointDefinition,
    schema: LogSchema,
    mode: "stored" | "consumer",
    fixed?: ReadonlyMap<string, string>,
  ): CompileContext {
    return new CompileContext(schema, endpoint.params, mode, endpoint.name, fixed);
  }

  alias(prefix: string): string {
    return `${prefix}${this.aliasCounter++}`;
  }

  param(name: string, node: AstNode): { index: number; type: SqlType } {
    // own keys only: `@constructor` or `@__proto__` is not declared by any endpoint
    const spec = Object.hasOwn(this.paramSpecs, name) ? this.paramSpecs[name] : undefined;
    if (!spec) {
      throw new QesError(
        "sql_invalid",
        `Query parameter @${name} is not declared by endpoint ${this.endpointName}; declared: ${
          Object.keys(this.paramSpecs)
            .map((p) => `@${p}`)
            .join(", ") || "none"
        }.`,
        locationOf(node),
      );
    }
    const type = spec.kind === "timestamp" ? TIMESTAMP : spec.kind === "integer" ? INT64 : STRING;
    return { index: this.slot(name, "endpoint", type), type };
  }

  now(): { index: number; type: SqlType } {
    return { index: this.slot("now", "now", TIMESTAMP), type: TIMESTAMP };
  }

  /**
   * The slot of an endpoint parameter where it is a regular expression (slot `index` elsewhere):
   * bound through the dialect's pattern syntax (`bindPattern`) there, and as sent where it is a
   * value, so `@p as shown` shows what the caller sent on every engine.
   */
  patternSlot(index: number): number {
    const p = this.params[index - 1];
    if (p?.kind !== "endpoint") return index;
    this.patternParams.add(p.name);
    return this.slot(p.name, "endpoint", STRING, "pattern");
  }

  /**
   * The slot of an endpoint parameter where it is a time zone: checked and bound through the
   * dialect's zone syntax (`bindZone`) there, as sent elsewhere.
   */
  zoneSlot(index: number): number {
    const p = this.params[index - 1];
    if (p?.kind !== "endpoint") return index;
    return this.slot(p.name, "endpoint", STRING, "zone");
  }

  private slot(name: string, kind: "endpoint" | "now", type: SqlType, use?: "pattern" | "zone"): number {
    const key = `${kind}:${name}${use ? `:${use}` : ""}`;
    let index = this.paramIndex.get(key);
    if (index === undefined) {
      this.params.push({
        name,
        kind,
        type: type.t === "scalar" ? type.s : "STRING",
        ...(use ? { [use]: true } : {}),
      });
      index = this.params.length;
      this.paramIndex.set(key, index);
    }
    return index;
  }

  /** counts `n` relations into the join graph being analysed; beyond the limit, `sql_too_complex` */
  joinRelations(n: number, node: AstNode): void {
    this.joined += n;
    if (this.joined > MAX_JOINED_RELATIONS) {
      const at = locationOf(node);
      throw new QesError(
        "sql_too_complex",
        `The query joins more than ${MAX_JOINED_RELATIONS} relations in one FROM clause (its subqueries and the CTEs it reads included)${at.line !== undefined ? ` (line ${at.line}, column ${at.column})` : ""}.`,
        at,
      );
    }
  }

  /** notes a reference to a CTE at the end of a chain of `chain` CTEs */
  readsCte(chain: number): void {
    this.chainRead = Math.max(this.chainRead, chain);
  }

  /**
   * Analyses a CTE's body and returns the chain it ends: one more than the longest it reads.
   * Engines inline a CTE read once, so a chain is nested subqueries to them (PostgreSQL planned
   * a chain of 128 in 0.4 s, 256 in 5 s, 500 past a 30 s timeout): beyond MAX_NESTING,
   * `sql_too_complex`.
   */
  cteChain<T>(analyze: () => T, node: AstNode): { result: T; chain: number } {
    const outer = this.chainRead;
    this.chainRead = 0;
    try {
      const result = analyze();
      const chain = this.chainRead + 1;
      if (chain > MAX_NESTING) {
        const at = locationOf(node);
        throw new QesError(
          "sql_too_complex",
          `WITH clauses read each other through more than ${MAX_NESTING} levels${at.line !== undefined ? ` (line ${at.line}, column ${at.column})` : ""}.`,
          at,
        );
      }
      return { result, chain };
    } finally {
      this.chainRead = outer;
    }
  }

  /** runs `analyze` as a join graph of its own (a CTE body, a branch of a set operation) */
  ownJoinGraph<T>(analyze: () => T): { result: T; relations: number } {
    const outer = this.joined;
    this.joined = 0;
    try {
      const result = analyze();
      return { result, relations: this.joined };
    } finally {
      this.joined = outer;
    }
  }

  /** per level entered, the nearest location (the parser gives CASE, NOT, … none of their own) */
  private readonly at: Array<{ line?: number; column?: number }> = [];

  enter(node: AstNode): void {
    const own = locationOf(node);
    const at = own.line !== undefined ? own : (this.at[this.at.length - 1] ?? {});
    if (this.depth + 1 > MAX_NESTING) {
      throw new QesError(
        "sql_too_complex",
        `The query nests deeper than ${MAX_NESTING} levels${at.line !== undefined ? ` (line ${at.line}, column ${at.column})` : ""}.`,
        at,
      );
    }
    this.depth++;
    this.at.push(at);
  }

  leave(): void {
    this.depth--;
    this.at.pop();
  }
}
