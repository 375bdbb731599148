/**
 * A SQL dialect: how the compiler's typed query tree is written for one engine. The default
 * emitter in core writes standard SQL; a dialect overrides only what differs (DESIGN.md §5).
 * Filled in by compile/; backends hand their instance to the compiler.
 */
export interface Dialect {
  readonly name: string;
}
