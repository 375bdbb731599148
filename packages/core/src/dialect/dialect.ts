import type { Query } from "../compile/ir.ts";

/**
 * A SQL dialect: how the compiler's typed query tree is written for one engine. The default
 * emitter (sql-emitter.ts) writes standard SQL; a dialect overrides only what differs.
 */
export interface Dialect {
  readonly name: string;
  /** how the engine reads regular expressions: pattern parameters are translated when bound */
  readonly regexSyntax?: "re2" | "postgres";
  /** SQL text with positional parameters `$1…$n` */
  emit(query: Query): string;
}
