/**
 * The construct rules of the desugaring (desugar.ts): each rewrites one construct node-sql-parser
 * cannot read into a `__qes_*` call (catalogue/internal-functions.ts) the analyser reads back.
 */

import { MAX_SQL_NESTING, SUBSCRIPT_MODES, tooDeep } from "./desugar.ts";
import {
  aggregateCall,
  endsTypedLiteral,
  isPrimaryEnd,
  OPERAND_BOUNDARY,
  operandEnd,
  operandStart,
  primaryStart,
} from "./desugar-operands.ts";
import type { Token } from "./lex-sql.ts";
import { isWord, matching, type Out, punct, splitTopLevel, stringOut, synth, tok } from "./token-scan.ts";

/** how many wraps deep the expression starting with a synthetic token is */
const wrapDepth = new WeakMap<Out, number>();

/** `head` wraps `inner` (the tokens of the expression it wraps): one level deeper than `inner`. */
function wrapping(head: Out, inner: readonly Out[]): Out {
  const first = inner[0];
  const depth = (first ? (wrapDepth.get(first) ?? 0) : 0) + 1;
  if (depth > MAX_SQL_NESTING) tooDeep(head.origin);
  wrapDepth.set(head, depth);
  return head;
}

/**
 * A construct node-sql-parser cannot read, rewritten where it starts (`tokens[at]`) onto `out`:
 * the index after what it consumed, or undefined when the construct does not start there.
 */
type ConstructRule = (tokens: Token[], at: number, out: Out[], strings: string[]) => number | undefined;

/** every string literal → a placeholder whose decoded value is kept aside */
const stringLiterals: ConstructRule = (tokens, at, out, strings) => {
  let i = at;
  const t = tokens[i]!;
  if (t.type === "string") {
    out.push(stringOut(t.value, strings, t));
    i++;
    return i;
  }
  return undefined;
};

/** `.25`, `1.5e3` → `__qes_float('…')` */
const floatLiterals: ConstructRule = (tokens, at, out, strings) => {
  let i = at;
  const t = tokens[i]!;
  // numbers the parser cannot read: `.25`, `1.5e3`
  if (t.type === "number" && (t.text.startsWith(".") || /[eE]/.test(t.text)) && !/^0[xX]/.test(t.text)) {
    out.push(synth("__qes_float", t), punct("(", t), stringOut(t.text, strings, t), punct(")", t));
    i++;
    return i;
  }
  return undefined;
};

/** `INTERVAL n UNIT` → `__qes_interval(n, 'UNIT')` */
const intervals: ConstructRule = (tokens, at, out, strings) => {
  let i = at;
  const t = tokens[i]!;
  // INTERVAL n UNIT (the parser knows only some units)
  if (isWord(t, "INTERVAL")) {
    let end = i + 1;
    if (tokens[end]?.value === "-" || tokens[end]?.value === "+") end++;
    if (tokens[end]?.value === "(") end = matching(tokens, end) + 1;
    else end++;
    const unit = tokens[end];
    if (unit?.type === "ident") {
      out.push(synth("__qes_interval", t), punct("(", t), ...rewrite(tokens.slice(i + 1, end), strings));
      out.push(punct(",", unit), stringOut(unit.value, strings, unit), punct(")", unit));
      i = end + 1;
      return i;
    }
  }
  return undefined;
};

/** `EXTRACT(part FROM e)` → `__qes_extract('part', e)` */
const extracts: ConstructRule = (tokens, at, out, strings) => {
  let i = at;
  const t = tokens[i]!;
  const next = tokens[i + 1];
  // EXTRACT(part FROM e), EXTRACT(WEEK(<weekday>) FROM e)
  const weekday =
    tokens[i + 3]?.value === "(" &&
    tokens[i + 4]?.type === "ident" &&
    tokens[i + 5]?.value === ")" &&
    isWord(tokens[i + 6], "FROM");
  if (
    isWord(t, "EXTRACT") &&
    next?.value === "(" &&
    tokens[i + 2]?.type === "ident" &&
    (isWord(tokens[i + 3], "FROM") || weekday)
  ) {
    const close = matching(tokens, i + 1);
    const part = weekday ? `${tokens[i + 2]!.value}(${tokens[i + 4]!.value})` : tokens[i + 2]!.value;
    out.push(
      synth("__qes_extract", t),
      punct("(", t),
      stringOut(part, strings, tokens[i + 2]!),
      punct(",", t),
    );
    out.push(...rewrite(tokens.slice(i + (weekday ? 7 : 4), close), strings), punct(")", tokens[close]!));
    i = close + 1;
    return i;
  }
  return undefined;
};

/** `ARRAY(SELECT …)` → `__qes_array_subquery((SELECT …))` */
const arraySubqueries: ConstructRule = (tokens, at, out, strings) => {
  let i = at;
  const t = tokens[i]!;
  const next = tokens[i + 1];
  // ARRAY(SELECT …), ARRAY<T>[…], and array literals […]
  if (
    (isWord(t, "ARRAY") && next?.value === "(" && isWord(tokens[i + 2], "SELECT")) ||
    (isWord(t, "ARRAY") && next?.value === "(" && isWord(tokens[i + 2], "WITH"))
  ) {
    const close = matching(tokens, i + 1);
    out.push(
      synth("__qes_array_subquery", t),
      punct("(", t),
      punct("(", t),
      ...rewrite(tokens.slice(i + 2, close), strings),
      punct(")", t),
      punct(")", tokens[close]!),
    );
    i = close + 1;
    return i;
  }
  return undefined;
};

/** `ARRAY<T>[a, b]` → `__qes_array_typed('T', a, b)` */
const typedArrayLiterals: ConstructRule = (tokens, at, out, strings) => {
  let i = at;
  const t = tokens[i]!;
  const next = tokens[i + 1];
  if (isWord(t, "ARRAY") && next?.value === "<") {
    let k = i + 2;
    let depth = 1;
    for (; k < tokens.length && depth > 0; k++) {
      if (tokens[k]!.value === "<") depth++;
      if (tokens[k]!.value === ">") depth--;
      if (tokens[k]!.value === ">>") depth -= 2;
    }
    const typeText = tokens
      .slice(i + 2, k - 1)
      .map((x) => x.text)
      .join(" ");
    if (tokens[k]?.value === "[") {
      const close = matching(tokens, k);
      out.push(synth("__qes_array_typed", t), punct("(", t), stringOut(typeText, strings, t));
      for (const part of splitTopLevel(tokens.slice(k + 1, close)))
        if (part.length) out.push(punct(",", t), ...rewrite(part, strings));
      out.push(punct(")", tokens[close]!));
      i = close + 1;
      return i;
    }
  }
  return undefined;
};

/** `[a, b]` → `__qes_array(a, b)` */
const arrayLiterals: ConstructRule = (tokens, at, out, strings) => {
  let i = at;
  const t = tokens[i]!;
  if (t.type === "punct" && t.value === "[" && !isPrimaryEnd(out[out.length - 1])) {
    const close = matching(tokens, i);
    out.push(synth("__qes_array", t), punct("(", t));
    splitTopLevel(tokens.slice(i + 1, close)).forEach((part, n) => {
      if (part.length === 0) return;
      if (n > 0) out.push(punct(",", t));
      out.push(...rewrite(part, strings));
    });
    out.push(punct(")", tokens[close]!));
    i = close + 1;
    return i;
  }
  return undefined;
};

/** `ARRAY_AGG` / `STRING_AGG` with DISTINCT, IGNORE NULLS, ORDER BY, LIMIT → `__qes_array_agg(…)` */
const orderedAggregates: ConstructRule = (tokens, at, out, strings) => {
  let i = at;
  const t = tokens[i]!;
  const next = tokens[i + 1];
  // ARRAY_AGG / STRING_AGG with modifiers
  if (t.type === "ident" && (t.value === "ARRAY_AGG" || t.value === "STRING_AGG") && next?.value === "(") {
    const close = matching(tokens, i + 1);
    out.push(...aggregateCall(t, tokens.slice(i + 2, close), strings));
    out.push(punct(")", tokens[close]!));
    i = close + 1;
    return i;
  }
  return undefined;
};

/** aggregates node-sql-parser reads without DISTINCT (its grammar takes DISTINCT in COUNT only) */
const DISTINCT_AGGREGATES = new Set(["SUM", "AVG", "MIN", "MAX"]);

/** `SUM(DISTINCT x)` (AVG, MIN, MAX) → `__qes_distinct('SUM', x)`, read back as the aggregate */
const distinctAggregates: ConstructRule = (tokens, at, out, strings) => {
  const t = tokens[at]!;
  if (
    t.type === "ident" &&
    DISTINCT_AGGREGATES.has(t.value.toUpperCase()) &&
    tokens[at + 1]?.value === "(" &&
    isWord(tokens[at + 2], "DISTINCT") &&
    !(out[out.length - 1]?.value === ".")
  ) {
    const close = matching(tokens, at + 1);
    out.push(
      synth("__qes_distinct", t),
      punct("(", t),
      stringOut(t.value.toUpperCase(), strings, t),
      punct(",", t),
      ...rewrite(tokens.slice(at + 3, close), strings),
      punct(")", tokens[close]!),
    );
    return close + 1;
  }
  return undefined;
};

/** the window functions BigQuery lets take `IGNORE NULLS` / `RESPECT NULLS` after their arguments */
const NULL_TREATMENT_WINDOWS = new Set(["FIRST_VALUE", "LAST_VALUE", "NTH_VALUE"]);

/**
 * `FIRST_VALUE(x IGNORE NULLS)` (LAST_VALUE, NTH_VALUE(x, n …)) → `__qes_ignore_nulls('FIRST_VALUE', x)`,
 * read back as the window call skipping NULLs; `RESPECT NULLS`, the default, is dropped. The OVER
 * clause after the call stays the rewritten call's.
 */
const nullTreatmentWindows: ConstructRule = (tokens, at, out, strings) => {
  const t = tokens[at]!;
  if (
    t.type !== "ident" ||
    !NULL_TREATMENT_WINDOWS.has(t.value.toUpperCase()) ||
    tokens[at + 1]?.value !== "(" ||
    out[out.length - 1]?.value === "."
  )
    return undefined;
  const close = matching(tokens, at + 1);
  const last = tokens[close - 1];
  const treatment = tokens[close - 2];
  if (!isWord(last, "NULLS") || !(isWord(treatment, "IGNORE") || isWord(treatment, "RESPECT")))
    return undefined;
  const args = rewrite(tokens.slice(at + 2, close - 2), strings);
  if (isWord(treatment, "RESPECT")) out.push(tok(t), punct("(", t), ...args);
  else
    out.push(
      synth("__qes_ignore_nulls", t),
      punct("(", t),
      stringOut(t.value.toUpperCase(), strings, t),
      punct(",", t),
      ...args,
    );
  out.push(punct(")", tokens[close]!));
  return close + 1;
};

/** `x[OFFSET(n)]`, `x[n]` and fields after them → `__qes_subscript(x, mode, n)`, `__qes_path(…)` */
const subscripts: ConstructRule = (tokens, at, out, strings) => {
  let i = at;
  const t = tokens[i]!;
  // subscripts
  if (t.type === "punct" && t.value === "[" && isPrimaryEnd(out[out.length - 1])) {
    const close = matching(tokens, i);
    const inner = tokens.slice(i + 1, close);
    let mode = "OFFSET";
    let index = inner;
    const first = inner[0];
    if (
      first?.type === "ident" &&
      (SUBSCRIPT_MODES as readonly string[]).includes(first.value) &&
      inner[1]?.value === "(" &&
      matching(inner, 1) === inner.length - 1
    ) {
      mode = first.value;
      index = inner.slice(2, -1);
    }
    const start = primaryStart(out);
    const primary = out.splice(start);
    const sub: Out[] = [
      wrapping(synth("__qes_subscript", t), primary),
      punct("(", t),
      ...primary,
      punct(",", t),
      synth(String(SUBSCRIPT_MODES.indexOf(mode as (typeof SUBSCRIPT_MODES)[number])), t),
      punct(",", t),
      ...rewrite(index, strings),
      punct(")", tokens[close]!),
    ];
    i = close + 1;
    const fields: Token[] = [];
    while (
      tokens[i]?.value === "." &&
      (tokens[i + 1]?.type === "ident" || tokens[i + 1]?.type === "quoted_ident")
    ) {
      fields.push(tokens[i + 1]!);
      i += 2;
    }
    if (fields.length) {
      out.push(wrapping(synth("__qes_path", t), sub), punct("(", t), ...sub);
      for (const f of fields)
        out.push(punct(",", f), stringOut(f.type === "ident" ? f.text : f.value, strings, f));
      out.push(punct(")", t));
    } else {
      out.push(...sub);
    }
    return i;
  }
  return undefined;
};

/** `e [ASC|DESC] NULLS FIRST|LAST` → `__qes_nulls_first(e) [ASC|DESC]` */
const nullsOrder: ConstructRule = (tokens, at, out) => {
  let i = at;
  const t = tokens[i]!;
  const next = tokens[i + 1];
  // NULLS FIRST | NULLS LAST
  if (isWord(t, "NULLS") && (isWord(next, "FIRST") || isWord(next, "LAST"))) {
    let end = out.length;
    const dir = out[end - 1];
    const hasDir = isWord(dir, "ASC") || isWord(dir, "DESC");
    if (hasDir) end--;
    const start = operandStart(out, end, new Set([",", "BY"]));
    const item = out.slice(start, end);
    const tail = hasDir ? [dir!] : [];
    out.splice(
      start,
      out.length - start,
      wrapping(synth(`__qes_nulls_${next!.value.toLowerCase()}`, t), item),
      punct("(", t),
      ...item,
      punct(")", t),
      ...tail,
    );
    i += 2;
    return i;
  }
  return undefined;
};

/** `a IS [NOT] DISTINCT FROM b` → `__qes_is_[not_]distinct(a, b)` */
const isDistinct: ConstructRule = (tokens, at, out, strings) => {
  let i = at;
  const t = tokens[i]!;
  const next = tokens[i + 1];
  // IS [NOT] DISTINCT FROM
  if (isWord(t, "IS")) {
    const not = isWord(next, "NOT");
    const d = tokens[i + (not ? 2 : 1)];
    const f = tokens[i + (not ? 3 : 2)];
    if (isWord(d, "DISTINCT") && isWord(f, "FROM")) {
      const start = operandStart(out, out.length, OPERAND_BOUNDARY);
      const left = out.splice(start);
      const rightStart = i + (not ? 4 : 3);
      const rightEnd = operandEnd(tokens, rightStart);
      const right = rewrite(tokens.slice(rightStart, rightEnd), strings);
      out.push(
        wrapping(synth(not ? "__qes_is_not_distinct" : "__qes_is_distinct", t), left),
        punct("(", t),
        ...left,
        punct(",", t),
        ...right,
        punct(")", t),
      );
      i = rightEnd;
      return i;
    }
  }
  return undefined;
};

/** `e AT TIME ZONE z` → `__qes_at_time_zone(e, z)` */
const atTimeZone: ConstructRule = (tokens, at, out, strings) => {
  let i = at;
  const t = tokens[i]!;
  const next = tokens[i + 1];
  // e AT TIME ZONE z
  if (
    isWord(t, "AT") &&
    isWord(next, "TIME") &&
    isWord(tokens[i + 2], "ZONE") &&
    (isPrimaryEnd(out[out.length - 1]) || endsTypedLiteral(out))
  ) {
    const start = primaryStart(out);
    const left = out.splice(start);
    const zoneEnd = operandEnd(tokens, i + 3);
    const zone = rewrite(tokens.slice(i + 3, zoneEnd), strings);
    out.push(
      wrapping(synth("__qes_at_time_zone", t), left),
      punct("(", t),
      ...left,
      punct(",", t),
      ...zone,
      punct(")", t),
    );
    i = zoneEnd;
    return i;
  }
  return undefined;
};

/**
 * PostgreSQL's cast operator, the type written in its own words, → BigQuery's CAST: Supabase
 * Studio's self-hosted pg_cron page sends `event_message::text LIKE '%cron job%'`, which the
 * reference platform's self-hosted (PostgreSQL) backend reads. A type qes does not map stays
 * `::` and is refused by the parser with its position.
 */
const PG_CAST_TYPES: Readonly<Record<string, string>> = {
  TEXT: "STRING",
  VARCHAR: "STRING",
  STRING: "STRING",
  INT: "INT64",
  INTEGER: "INT64",
  BIGINT: "INT64",
  INT8: "INT64",
  INT64: "INT64",
  FLOAT8: "FLOAT64",
  FLOAT64: "FLOAT64",
  BOOL: "BOOL",
  BOOLEAN: "BOOL",
};

/** `e::text` → `CAST(e AS STRING)` */
const pgCasts: ConstructRule = (tokens, at, out) => {
  const t = tokens[at]!;
  const type = tokens[at + 1];
  if (t.type !== "punct" || t.value !== "::" || type?.type !== "ident") return undefined;
  const target = PG_CAST_TYPES[type.value];
  const last = out[out.length - 1];
  const literal = last?.kind === "string" || last?.kind === "number";
  if (target === undefined || !(literal || isPrimaryEnd(last))) return undefined;
  const left = out.splice(literal ? out.length - 1 : primaryStart(out));
  out.push(
    wrapping(synth("CAST", t), left),
    punct("(", t),
    ...left,
    synth("AS", t),
    synth(target, type),
    punct(")", type),
  );
  return at + 2;
};

/** The construct rules, tried in this order at each token; each has its input→output tests. */
export const CONSTRUCT_RULES: ReadonlyArray<{ name: string; rule: ConstructRule }> = [
  { name: "string-literals", rule: stringLiterals },
  { name: "float-literals", rule: floatLiterals },
  { name: "intervals", rule: intervals },
  { name: "extracts", rule: extracts },
  { name: "array-subqueries", rule: arraySubqueries },
  { name: "typed-array-literals", rule: typedArrayLiterals },
  { name: "array-literals", rule: arrayLiterals },
  { name: "ordered-aggregates", rule: orderedAggregates },
  { name: "distinct-aggregates", rule: distinctAggregates },
  { name: "null-treatment-windows", rule: nullTreatmentWindows },
  { name: "subscripts", rule: subscripts },
  { name: "nulls-order", rule: nullsOrder },
  { name: "is-distinct", rule: isDistinct },
  { name: "at-time-zone", rule: atTimeZone },
  { name: "pg-casts", rule: pgCasts },
];

/** Rewrites every construct of the token stream (recursively inside the ones it wraps). */
export function rewrite(tokens: Token[], strings: string[]): Out[] {
  const out: Out[] = [];
  let i = 0;
  while (i < tokens.length) {
    let next: number | undefined;
    for (const { rule } of CONSTRUCT_RULES) {
      next = rule(tokens, i, out, strings);
      if (next !== undefined) break;
    }
    if (next !== undefined) {
      i = next;
      continue;
    }
    out.push(tok(tokens[i]!));
    i++;
  }
  return out;
}
