import { QesError } from "../errors.ts";
import { parseTimestampMicros } from "../params/parse-timestamp.ts";
import { type AstNode, locationOf } from "../parse/parse-sql.ts";
import type { ScalarType } from "../schema/schema-model.ts";
import type { Expr } from "./ir.ts";
import { FLOAT64, INT64, isNumeric, isTemporal, type SqlType, typeName } from "./sql-type.ts";

const INT64_MAX = 9223372036854775807n;
/** the digits of INT64's least value, -2^63: a literal only with its minus sign */
export const INT64_MIN_DIGITS = "9223372036854775808";

export function literalOfNumber(value: unknown): Expr {
  const text = String(value);
  if (/^-?\d+$/.test(text)) {
    const big = BigInt(text);
    if (big > INT64_MAX || big < -INT64_MAX - 1n) return { k: "lit", value: Number(text), type: FLOAT64 };
    return { k: "lit", value: Number.isSafeInteger(Number(text)) ? Number(text) : big, type: INT64 };
  }
  return { k: "lit", value: Number(text), type: FLOAT64 };
}

/**
 * A bare NULL where a value of type `s` is expected, as that type. BigQuery types a NULL from
 * where it stands (INT64 when nothing says more); engines left with an untyped NULL refuse calls
 * it makes ambiguous (PostgreSQL: `function sum(unknown) is not unique`) where others answer NULL.
 */
export function typedNull(e: Expr, s: ScalarType): Expr {
  if (e.k !== "lit" || e.value !== null || e.type.t !== "null") return e;
  return { k: "cast", expr: e, to: s, safe: false, type: { t: "scalar", s } };
}

/** a NULL literal, bare or typed by `typedNull` */
export function isNullLiteral(e: Expr | undefined): boolean {
  const inner = e?.k === "cast" ? e.expr : e;
  return inner?.k === "lit" && inner.value === null;
}

/**
 * An aggregate's literal argument, typed: a bare NULL as `s`, a string literal as STRING. Engines
 * that leave a quoted literal untyped refuse it in a generic aggregate (PostgreSQL:
 * `function array_agg(unknown) is not unique`) where BigQuery and the others aggregate it.
 */
export function typedAggregateLiteral(e: Expr, s: ScalarType): Expr {
  if (e.k === "lit" && typeof e.value === "string" && e.type.t === "scalar" && e.type.s === "STRING")
    return { k: "cast", expr: e, to: "STRING", safe: false, type: e.type };
  return typedNull(e, s);
}

/** seconds with a fraction of seven or more digits */
const PAST_MICROSECONDS = /:\d{2}[.,]\d{7}/;

/**
 * BigQuery's literal coercion: a string literal where a TIMESTAMP, DATETIME or DATE is expected
 * is parsed at compile time (and refused there when it is not one).
 */
export function coerceLiteralTo(e: Expr, target: ScalarType, node?: AstNode): Expr {
  if (e.k !== "lit" || typeof e.value !== "string") return e;
  if (target === "TIMESTAMP" || target === "DATETIME" || target === "DATE") {
    // event timestamps lose digits past microseconds (shippers send nanoseconds); a literal is
    // BigQuery's error, not a time other than the one written
    if (PAST_MICROSECONDS.test(e.value)) {
      throw new QesError(
        "sql_invalid",
        `Invalid ${target} literal '${e.value}': more than six fraction digits (BigQuery keeps microseconds).`,
        locationOf(node),
      );
    }
    const micros = parseTimestampMicros(e.value);
    if (micros === undefined) {
      throw new QesError(
        "sql_invalid",
        `Could not cast literal '${e.value}' to type ${target}.`,
        locationOf(node),
      );
    }
    const value =
      target === "DATE"
        ? micros - (((micros % 86_400_000_000n) + 86_400_000_000n) % 86_400_000_000n)
        : micros;
    return { k: "lit", value, type: { t: "scalar", s: target } };
  }
  return e;
}

function isLiteral(e: Expr): boolean {
  return e.k === "lit";
}

/**
 * Makes two sides comparable. Temporal values against string literals coerce the literal;
 * a field inferred from JSON against a value of another type is cast (safely: NULL when it
 * cannot be) to that type — DESIGN.md §3's departure, so `metadata.status = '200'` compares
 * as text and `status_code >= 400` as numbers.
 */
export function coerceForComparison(left: Expr, right: Expr, node: AstNode): [Expr, Expr] {
  const lt = left.type;
  const rt = right.type;
  if (lt.t === "null" || rt.t === "null") return [left, right];
  if (lt.t !== "scalar" || rt.t !== "scalar") {
    throw new QesError(
      "sql_invalid",
      `Cannot compare ${typeName(lt)} with ${typeName(rt)}.`,
      locationOf(node),
    );
  }
  if (lt.s === rt.s || (isNumeric(lt) && isNumeric(rt))) return [left, right];
  if (isTemporal(lt) && rt.s === "STRING" && isLiteral(right))
    return [left, coerceLiteralTo(right, lt.s, node)];
  if (isTemporal(rt) && lt.s === "STRING" && isLiteral(left))
    return [coerceLiteralTo(left, rt.s, node), right];
  if (isTemporal(lt) && isTemporal(rt)) return [left, right];
  const leftJson = "fromJson" in left && left.fromJson && !isLiteral(left);
  const rightJson = "fromJson" in right && right.fromJson && !isLiteral(right);
  if (leftJson && !rightJson) return [safeCast(left, rt), right];
  if (rightJson && !leftJson) return [left, safeCast(right, lt)];
  if (leftJson && rightJson)
    return [safeCast(left, { t: "scalar", s: "STRING" }), safeCast(right, { t: "scalar", s: "STRING" })];
  throw new QesError(
    "sql_invalid",
    `No matching signature for comparing ${typeName(lt)} with ${typeName(rt)}.`,
    locationOf(node),
  );
}

function safeCast(e: Expr, to: SqlType): Expr {
  if (to.t !== "scalar") return e;
  return { k: "cast", expr: e, to: to.s, safe: true, type: to };
}
