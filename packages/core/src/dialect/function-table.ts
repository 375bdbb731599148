import type { EmittedFunctionName } from "../catalogue/functions.ts";
import type { InternalFunctionName } from "../catalogue/internal-functions.ts";
import type { Expr } from "../compile/ir.ts";
import type { SqlEmitter } from "./sql-emitter.ts";

export type CallExpr = Extract<Expr, { k: "call" }>;

/** Emits one call from its emitted arguments (sqlglot's TRANSFORMS, one row each). */
export type FunctionEmitter = (args: string[], call: CallExpr, emitter: SqlEmitter) => string;

/**
 * A function the engine cannot express: the row says why, and every query that calls it is refused
 * when it compiles for this dialect (`qes check`, start-up, consumer SQL), naming the backend —
 * never sent to the engine to fail at run time.
 */
export interface Unsupported {
  readonly unsupported: string;
}

export function unsupported(reason: string): Unsupported {
  return { unsupported: reason };
}

export function isUnsupported(row: FunctionEmitter | Unsupported): row is Unsupported {
  return typeof row !== "function";
}

/** Every name a dialect's table must have a row for: the catalogue's and the compiler's own. */
export type FunctionTableName = EmittedFunctionName | InternalFunctionName;

/**
 * A dialect's function table: one row per catalogue function (and internal call), typed over the
 * catalogue's names, so a dialect missing a row fails `tsc -b`. Dialects spread the shared
 * `DEFAULT_FUNCTIONS` (standard SQL) and override or add rows:
 *
 *     readonly functions: FunctionTable = {
 *       ...DEFAULT_FUNCTIONS,
 *       ENDS_WITH: rename("endsWith"),
 *       FORMAT: unsupported("no printf-style formatting"),
 *     };
 */
export type FunctionTable = { readonly [N in FunctionTableName]: FunctionEmitter | Unsupported };

/** `name(args…)` under another name: most rows of a dialect's table. */
export const rename =
  (name: string): FunctionEmitter =>
  (args) =>
    `${name}(${args.join(", ")})`;
