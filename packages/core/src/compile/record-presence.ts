import type { Expr, Select } from "./ir.ts";
import { rejectsRowsWhereNull } from "./null-rejection.ts";
import type { RecordValue } from "./record-value.ts";

/**
 * The presence tests `CROSS JOIN UNNEST(record)` adds to one SELECT's WHERE (a JSON object is a
 * one-element array: a row whose object is absent or null has no element, so it is dropped).
 * Two rules keep them from costing more than they must:
 *
 * - per record root, a nested record's test implies its ancestors' (a nested presence flag is set
 *   only inside an object), so an ancestor's test is dropped — for a top-level record that test
 *   would read its whole JSON column only to see it is not NULL;
 * - after the WHERE clause is read, a test is dropped where that clause already implies it: the
 *   clause rejects NULL in a column that is NULL wherever the object is absent
 *   (`RecordRoot.presenceImpliedBy`), e.g. `regexp_contains(r.url, @p)` after
 *   `cross join unnest(m.request) as r`. Only the SELECT's own WHERE counts: a LEFT JOIN's ON does
 *   not filter rows, and conditions inside subqueries filter other rows.
 */
interface PresenceTest {
  root: RecordValue["root"];
  path: string[];
  expr: Expr;
}

const presenceOf = new WeakMap<Select, PresenceTest[]>();

const isPrefix = (a: string[], b: string[]) => a.length <= b.length && a.every((p, i) => p === b[i]);

/** Adds the presence test of a CROSS JOIN UNNEST(rec) to the SELECT's WHERE, once per record. */
export function requirePresence(select: Select, rec: RecordValue, presence: Expr): void {
  if (rec.guard) {
    select.where.push(presence);
    return;
  }
  const known = presenceOf.get(select) ?? [];
  presenceOf.set(select, known);
  // an existing test of a descendant already implies this one
  if (known.some((k) => k.root === rec.root && isPrefix(rec.path, k.path))) return;
  for (const k of known.filter((k) => k.root === rec.root && isPrefix(k.path, rec.path))) {
    const i = select.where.indexOf(k.expr);
    if (i >= 0) select.where.splice(i, 1);
    known.splice(known.indexOf(k), 1);
  }
  known.push({ root: rec.root, path: rec.path, expr: presence });
  select.where.push(presence);
}

/** Drops the presence tests the SELECT's WHERE clause (`where`, already in `select.where`) implies. */
export function dropPresenceImpliedBy(select: Select, where: Expr): void {
  const known = presenceOf.get(select);
  if (!known?.length) return;
  for (const test of known) {
    // where the object is absent every one of these columns is NULL
    const implying = test.root.presenceImpliedBy?.(test.path);
    if (!implying?.size || !rejectsRowsWhereNull(where, implying)) continue;
    const i = select.where.indexOf(test.expr);
    if (i >= 0) select.where.splice(i, 1);
  }
}
