import type { FieldNode } from "../schema/schema-model.ts";
import type { Expr, Select } from "./ir.ts";
import { and, guarded, leafType, type RecordRoot, type RecordValue } from "./record-value.ts";
import { BOOL, NULL_TYPE, type SqlType } from "./sql-type.ts";

/** What a name evaluates to: an expression, or a record whose fields are resolved lazily. */
export type Value = { kind: "expr"; expr: Expr } | { kind: "record"; rec: RecordValue };

export function valueType(v: Value): SqlType {
  return v.kind === "expr" ? v.expr.type : { t: "record", node: v.rec.node, repeated: v.rec.repeated };
}

/** A named FROM item (a range variable, in BigQuery's words). */
export interface RangeVar {
  /** BigQuery name, lower-cased for lookup */
  name: string;
  /** a column visible through it (case-insensitive); evaluated lazily, since reading a record
   * field through a CTE adds a hidden column to it */
  column(name: string): Value | undefined;
  /** column names in select-star order */
  columnNames(): string[];
  /** a column of SELECT * that `column` does not resolve (an UNNEST alias's own value) */
  star?(name: string): Value | undefined;
  /** the range variable used as a value (an UNNEST alias is the element itself) */
  self?: Value;
  /** columns left out of SELECT * (the right side of JOIN … USING) */
  starExclude?: Set<string>;
  /** a source table or a record from one: unknown field names are NULL (DESIGN.md §3) */
  schemaless: boolean;
}

/** Output column of a CTE or subquery as seen from outside. */
export interface DerivedOutput {
  /** BigQuery name (may be empty for anonymous expressions) */
  name: string;
  /** physical name in the emitted SQL */
  phys: string;
}

/**
 * A CTE or subquery whose record-valued outputs are passed through on demand: when an outer
 * query reads a field of such a record, a hidden column with that field is added to every
 * branch (several for set operations) before emission.
 */
export class DerivedRelation {
  readonly hidden = new Map<string, string>();
  private next = 0;

  constructor(
    readonly outputs: DerivedOutput[],
    /** per branch: its select and its output values, aligned with `outputs` */
    readonly branches: Array<{ select: Select; values: Value[] }>,
    readonly phys: string,
  ) {}

  demand(index: number, what: string, make: (value: Value) => Expr): string {
    const key = `${index}:${what}`;
    const existing = this.hidden.get(key);
    if (existing) return existing;
    const name = `${this.phys}_h${this.next++}`;
    this.hidden.set(key, name);
    for (const b of this.branches) b.select.items.push({ expr: make(b.values[index]!), name });
    return name;
  }
}

/** The record-valued output `index` of a derived relation, read through alias `rel`. */
export function derivedRoot(rel: string, derived: DerivedRelation, index: number): RecordRoot {
  const col = (name: string, type: SqlType): Expr => ({ k: "col", rel, col: name, type, fromJson: true });
  return {
    leaf(path, node: FieldNode) {
      const type = leafType(node);
      // the path as JSON, not joined by dots: a key `a.b` and the record path a → b are two fields
      const name = derived.demand(index, `L:${JSON.stringify(path)}`, (v) =>
        v.kind === "record"
          ? guarded(v.rec.root.leaf([...v.rec.path, ...path], node), v.rec.guard)
          : nullOf(type),
      );
      return col(name, type);
    },
    presence(path) {
      const name = derived.demand(index, `P:${JSON.stringify(path)}`, (v) =>
        v.kind === "record"
          ? (and(v.rec.guard, v.rec.root.presence([...v.rec.path, ...path])) as Expr)
          : nullOf(BOOL),
      );
      return { k: "op", op: "IS TRUE", args: [col(name, BOOL)], type: BOOL };
    },
    json(path, type) {
      const name = derived.demand(index, `J:${JSON.stringify(path)}`, (v) =>
        v.kind === "record"
          ? guarded(v.rec.root.json([...v.rec.path, ...path], type), v.rec.guard)
          : nullOf(type),
      );
      return col(name, type);
    },
  };
}

function nullOf(type: SqlType): Expr {
  return { k: "lit", value: null, type: type.t === "scalar" ? type : NULL_TYPE };
}

/** Names visible in one SELECT: its FROM items, then enclosing queries' (correlation). */
export class Scope {
  readonly vars: RangeVar[] = [];
  constructor(readonly parent?: Scope) {}

  findVar(name: string): RangeVar | undefined {
    const lower = name.toLowerCase();
    for (let s: Scope | undefined = this; s; s = s.parent) {
      const v = s.vars.find((r) => r.name === lower);
      if (v) return v;
    }
    return undefined;
  }

  /** Columns merged by JOIN … USING: one name, no ambiguity. */
  readonly merged = new Map<string, Value>();

  /**
   * The FROM item of the nearest scope that has the column; enclosing scopes after. A name found
   * in two FROM items of one scope is ambiguous, as in BigQuery.
   */
  findColumn(name: string): Value | { ambiguous: string[] } | undefined {
    const lower = name.toLowerCase();
    for (let s: Scope | undefined = this; s; s = s.parent) {
      const merged = s.merged.get(lower);
      if (merged) return merged;
      const found: Array<[RangeVar, Value]> = [];
      for (const v of s.vars) {
        // the name as written: a source holding both `Foo` and `foo` (JSON keys differ by case
        // where BigQuery's columns cannot) reads each by its own spelling, either one otherwise
        const c = v.column(name);
        if (c) found.push([v, c]);
      }
      if (found.length === 1) return found[0]![1];
      if (found.length > 1) return { ambiguous: found.map(([v]) => v.name) };
    }
    return undefined;
  }

  anySchemaless(): boolean {
    for (let s: Scope | undefined = this; s; s = s.parent) if (s.vars.some((v) => v.schemaless)) return true;
    return false;
  }
}
