import { isInt64Number, isJsonObject, type JsonObject, type JsonValue, setOwn } from "./json-value.ts";
import {
  BUILTIN_SOURCES,
  FIXED_COLUMNS,
  type FieldNode,
  type LogSchema,
  type ScalarType,
  type SourceSchema,
} from "./schema-model.ts";

/**
 * How a physical column stores its values (schema-model.ts layout), independent of any engine:
 * a scalar type, `JSON` (JSON text of an object or array), or `PRESENCE` (BOOLEAN, true when a
 * nested record is an object).
 */
export type ColumnType = ScalarType | "JSON" | "PRESENCE";

/**
 * One change a widening made, in the order a backend must apply it. `path` is the field path
 * from the top (`["metadata", "request", "method"]`).
 */
export type SchemaChange =
  /** a new column; `backfill`: fill existing rows with the JSON text at `path` inside `column`'s JSON */
  | {
      op: "add_column";
      path: string[];
      column: string;
      type: ColumnType;
      /** `wrap`: an object there becomes a one-element array (a nested record widened to records) */
      backfill?: { column: string; path: string[]; wrap?: true };
    }
  /**
   * a column's type widened; existing values convert by the engine's cast (INT64 → FLOAT64 / STRING,
   * JSON → STRING), except that to STRING a number reads as core writes it (`textOfJsonValue`)
   */
  | { op: "alter_column"; path: string[]; column: string; from: ColumnType; to: ColumnType }
  /**
   * a top-level record met an array of objects and became records (DESIGN.md §3: an object is a
   * repeated record of one): each object in its JSON column becomes a one-element array
   */
  | { op: "wrap_in_array"; path: string[]; column: string }
  /** a column no field uses any more (the children of a record widened to STRING) */
  | { op: "drop_column"; path: string[]; column: string }
  /** a field read from an ancestor's JSON text changed type: no storage change */
  | { op: "retype_field"; path: string[] };

/** A physical column of a source's table. */
export interface PhysicalColumn {
  column: string;
  type: ColumnType;
  /** field path from the top; fixed columns have a path of one */
  path: string[];
}

const COLUMN_NAME = /^f(\d+)$/;

function fixedNode(name: string, type: ScalarType): FieldNode {
  return { name, kind: "scalar", type, column: name };
}

function safeTableName(sourceName: string): string {
  const base = sourceName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .slice(0, 50)
    // trimmed after the cut, so that a name cut after a `_` ends in no `_`: a collision's `_2` must
    // not make the `__` that only PostgreSQL's partition names hold (postgres-partitions.ts)
    .replace(/^_+|_+$/g, "");
  return "src_" + (base === "" ? "source" : base);
}

/**
 * An empty schema for a new source: the four fixed fields and a table name that is a safe SQL
 * identifier (lower case, `[a-z0-9_]`, never two `_` in a row, e.g. `src_cloudflare_logs_prod`),
 * unique among `takenTables` (a collision gets `_2`, `_3`, …).
 *
 * @param ownNames the names a backend gives the table's own objects beside it (PostgreSQL's
 *   indexes, a ClickHouse cluster's local table): a table one of whose names is taken is skipped
 *   too, since `if not exists` would silently take the other relation for its own
 */
export function newSourceSchema(
  name: string,
  takenTables: Iterable<string> = [],
  ownNames: (table: string) => readonly string[] = () => [],
): SourceSchema {
  const taken = new Set(takenTables);
  const free = (t: string) => !taken.has(t) && !ownNames(t).some((n) => taken.has(n));
  const base = safeTableName(name);
  let table = base;
  for (let i = 2; !free(table); i++) table = `${base}_${i}`;
  const fields: Record<string, FieldNode> = {};
  for (const [field, type] of Object.entries(FIXED_COLUMNS)) fields[field] = fixedNode(field, type);
  return { name, table, fields };
}

/** The schema every store starts with: the nine built-in sources, empty. */
export function builtinLogSchema(): LogSchema {
  const sources: Record<string, SourceSchema> = {};
  const tables: string[] = [];
  for (const name of BUILTIN_SOURCES) {
    const source = newSourceSchema(name, tables);
    tables.push(source.table);
    sources[name] = source;
  }
  return { version: 1, sources };
}

/** A deep copy, for widening a schema that must stay untouched if a load fails. */
export function cloneSourceSchema(schema: SourceSchema): SourceSchema {
  return structuredClone(schema);
}

function forEachNode(
  fields: Record<string, FieldNode>,
  path: string[],
  fn: (n: FieldNode, p: string[]) => void,
) {
  for (const node of Object.values(fields)) {
    const p = [...path, node.name];
    fn(node, p);
    if (node.fields) forEachNode(node.fields, p, fn);
  }
}

/** A source's fields at every depth: records and the fields inside them (`QES_INGEST_MAX_FIELDS` counts these). */
export function countFields(fields: Readonly<Record<string, FieldNode>>): number {
  let n = 0;
  for (const node of Object.values(fields)) n += 1 + (node.fields ? countFields(node.fields) : 0);
  return n;
}

function columnNumber(column: string): number {
  const m = COLUMN_NAME.exec(column);
  return m ? Number(m[1]) : -1;
}

/** Storage type of a node's column per the layout. */
export function columnTypeOf(node: FieldNode, topLevel: boolean): ColumnType {
  if (node.kind === "scalar") return node.type ?? "STRING";
  if (node.kind === "record") return topLevel ? "JSON" : "PRESENCE";
  return "JSON";
}

/**
 * Every physical column of a source's table: the fixed columns first, then `f<N>` by N (the order
 * in which columns were added, so the order of the table's columns).
 */
export function physicalColumns(schema: SourceSchema): PhysicalColumn[] {
  const fixed: PhysicalColumn[] = Object.keys(FIXED_COLUMNS).map((name) => ({
    column: name,
    type: FIXED_COLUMNS[name]!,
    path: [name],
  }));
  const others: PhysicalColumn[] = [];
  forEachNode(schema.fields, [], (node, path) => {
    if (node.column === undefined || Object.hasOwn(FIXED_COLUMNS, node.column)) return;
    others.push({ column: node.column, type: columnTypeOf(node, path.length === 1), path });
  });
  others.sort((a, b) => columnNumber(a.column) - columnNumber(b.column));
  return [...fixed, ...others];
}

// ---------------------------------------------------------------------------------------------
// Widening

type Observed =
  | { kind: "scalar"; type: ScalarType }
  | { kind: "record" }
  | { kind: "records" }
  | { kind: "array"; type: ScalarType }
  /** an empty or all-null array: an array of something, nothing more is known */
  | { kind: "empty_array" };

function scalarType(value: string | number | bigint | boolean): ScalarType {
  if (typeof value === "string") return "STRING";
  if (typeof value === "boolean") return "BOOL";
  return isInt64Number(value) ? "INT64" : "FLOAT64";
}

function widenScalar(a: ScalarType, b: ScalarType): ScalarType {
  if (a === b) return a;
  if ((a === "INT64" && b === "FLOAT64") || (a === "FLOAT64" && b === "INT64")) return "FLOAT64";
  return "STRING";
}

/** True when a value of a known scalar field changes nothing (STRING takes any value as text). */
function fitsScalar(type: ScalarType, value: JsonValue): boolean {
  if (type === "STRING") return true;
  switch (typeof value) {
    case "boolean":
      return type === "BOOL";
    case "number":
    case "bigint":
      return type === "FLOAT64" || (type === "INT64" && isInt64Number(value));
    default:
      return false;
  }
}

function observe(value: JsonValue): Observed | null {
  if (value === null) return null;
  if (Array.isArray(value)) {
    let objects = 0;
    let others = 0;
    let type: ScalarType | null = null;
    for (const el of value) {
      if (el === null) continue;
      if (isJsonObject(el)) objects++;
      else {
        others++;
        type = Array.isArray(el)
          ? "STRING"
          : type === null
            ? scalarType(el)
            : widenScalar(type, scalarType(el));
      }
    }
    if (objects === 0 && others === 0) return { kind: "empty_array" };
    if (others === 0) return { kind: "records" };
    // objects mixed with scalars, or arrays of arrays: elements are kept as text
    return { kind: "array", type: objects > 0 ? "STRING" : (type as ScalarType) };
  }
  if (typeof value === "object") return { kind: "record" };
  return { kind: "scalar", type: scalarType(value) };
}

interface Place {
  path: string[];
  /** fields below an array element have no column */
  underArray: boolean;
  /** the top-level record's column holding this subtree's JSON text, when reached through objects */
  topColumn?: string;
}

/**
 * Thrown by `widenSchema` when a source would hold more fields than its `maxFields` once widened
 * by the event. The widening stops once it holds twice the limit instead of building every field
 * of the event first (one event of 600,000 keys took the server's thread 2.5 s to widen and then
 * count); it does not stop at the first field past the limit, since a conflict later in the same
 * event may free fields (a record becoming a STRING): `{"new": 1, "rec": "text"}` was refused where
 * `{"rec": "text", "new": 1}` was taken. The schema is left half-widened: callers widen a copy.
 */
export class FieldLimitError extends Error {
  constructor(readonly maxFields: number) {
    super(`more than ${maxFields} fields`);
    this.name = "FieldLimitError";
  }
}

class Widener {
  readonly changes: SchemaChange[] = [];
  private next = 0;
  /**
   * fields the source may still gain before it passes `maxFields` (none counted without one);
   * below zero while the event is widened, as long as a later conflict may give them back
   */
  private room: number;

  constructor(
    private readonly schema: SourceSchema,
    private readonly maxFields?: number,
  ) {
    // a source past a limit lowered since keeps its fields: it may not gain one, but may retype
    this.room =
      maxFields === undefined
        ? Number.POSITIVE_INFINITY
        : Math.max(0, maxFields - countFields(schema.fields));
  }

  /** Throws when the event, widened whole, left the source past `maxFields`. */
  checkRoom(): void {
    if (this.room < 0) throw new FieldLimitError(this.maxFields as number);
  }

  private allocate(): string {
    this.reserveColumns();
    return `f${this.next++}`;
  }

  /** Counts past every column in use, before a widening takes columns away from nodes. */
  private reserveColumns(): void {
    if (this.next !== 0) return;
    let max = 0;
    forEachNode(this.schema.fields, [], (node) => {
      if (node.column !== undefined) max = Math.max(max, columnNumber(node.column));
    });
    this.next = max + 1;
  }

  /** Widens `fields[name]` with one value; creates the field when new. */
  field(fields: Record<string, FieldNode>, name: string, value: JsonValue, place: Place): void {
    if (value === null) return;
    // Fast path, taken by nearly every field of every event once the schema has settled.
    const known = Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (known?.kind === "scalar" && fitsScalar(known.type ?? "STRING", value)) return;
    const seen = observe(value);
    if (seen === null) return;
    const path = [...place.path, name];
    const existing = Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (existing === undefined) {
      setOwn(fields, name, this.create(name, seen, path, place));
    } else {
      this.widen(existing, seen, path, place);
    }
    const node = fields[name]!;
    this.children(node, value, path, place);
  }

  private children(node: FieldNode, value: JsonValue, path: string[], place: Place): void {
    if (node.kind === "record" && isJsonObject(value)) {
      const topColumn = path.length === 1 ? node.column : place.topColumn;
      const inner: Place = { path, underArray: place.underArray, ...(topColumn ? { topColumn } : {}) };
      for (const key of Object.keys(value)) this.field(node.fields!, key, value[key]!, inner);
    } else if (node.kind === "records" && (Array.isArray(value) || isJsonObject(value))) {
      // an object is a records field's one element (see `widen`)
      const inner: Place = { path, underArray: true };
      for (const el of Array.isArray(value) ? value : [value]) {
        if (!isJsonObject(el)) continue;
        for (const key of Object.keys(el)) this.field(node.fields!, key, el[key]!, inner);
      }
    }
  }

  private create(name: string, seen: Observed, path: string[], place: Place) {
    // past twice the limit, no conflict still to come is assumed to bring it back under
    if (--this.room < -(this.maxFields as number)) throw new FieldLimitError(this.maxFields as number);
    // An empty (or all-null) array is an array of nothing known yet: an `array` with no type, whose
    // JSON text keeps the value until a later value says what its elements are (`widen`). Not
    // creating the field lost the value whenever the field was typed by a later request.
    const node: FieldNode = { name, kind: seen.kind === "empty_array" ? "array" : seen.kind };
    if (seen.kind === "scalar" || seen.kind === "array") node.type = seen.type;
    if (seen.kind === "record" || seen.kind === "records") node.fields = {};
    if (place.underArray) {
      this.changes.push({ op: "retype_field", path });
    } else {
      node.column = this.allocate();
      this.changes.push({
        op: "add_column",
        path,
        column: node.column,
        type: columnTypeOf(node, path.length === 1),
      });
    }
    return node;
  }

  private widen(node: FieldNode, seen: Observed, path: string[], place: Place): void {
    if (node.kind === "scalar") {
      if (seen.kind === "scalar")
        this.retypeScalar(node, widenScalar(node.type ?? "STRING", seen.type), path);
      else this.retypeScalar(node, "STRING", path);
      return;
    }
    if (node.kind === seen.kind && node.kind !== "array") return;
    // An object and an array of objects are one repeated record (DESIGN.md §3), which real
    // sources mix: an object is an array of one.
    if (node.kind === "records" && seen.kind === "record") {
      if (path.length > 1 && node.objects !== true) {
        // an ancestor's JSON text now holds an object here
        node.objects = true;
        this.changes.push({ op: "retype_field", path });
      }
      return;
    }
    // an empty array is records of none (PHP writes an empty object as `[]`); as STRING, the
    // record's fields would no longer be read at all
    if (node.kind === "record" && (seen.kind === "records" || seen.kind === "empty_array")) {
      this.toRecords(node, path, place);
      return;
    }
    if (node.kind === "array" && node.type === undefined && seen.kind !== "empty_array") {
      this.typeArray(node, seen, path, place);
      return;
    }
    if (node.kind === "array" && seen.kind === "array") {
      const type = widenScalar(node.type ?? "STRING", seen.type);
      if (type !== node.type) {
        node.type = type;
        this.changes.push({ op: "retype_field", path });
      }
      return;
    }
    if (seen.kind === "empty_array" && (node.kind === "array" || node.kind === "records")) return;
    this.toString(node, path, place);
  }

  /**
   * An array of no known element type (only empty or all-null arrays so far) takes the kind of
   * its first value that says more: its stored texts (`[]`, `[null]`) read as any array, so only
   * the reading changes. Objects make it records: an object is an array of one (DESIGN.md §3),
   * which a top-level field's writer wraps and a nested field's reader is told of (`objects`). A
   * scalar makes it a STRING of its text, as any array meeting a scalar.
   */
  private typeArray(node: FieldNode, seen: Observed, path: string[], place: Place): void {
    if (seen.kind === "scalar") {
      this.toString(node, path, place);
      return;
    }
    this.changes.push({ op: "retype_field", path });
    if (seen.kind === "array") {
      node.type = seen.type;
      return;
    }
    node.kind = "records";
    node.fields = {};
    if (seen.kind === "record" && path.length > 1) node.objects = true;
  }

  private retypeScalar(node: FieldNode, type: ScalarType, path: string[]): void {
    const from = node.type ?? "STRING";
    if (type === from) return;
    node.type = type;
    if (node.column === undefined) this.changes.push({ op: "retype_field", path });
    else this.changes.push({ op: "alter_column", path, column: node.column, from, to: type });
  }

  /**
   * A record met an array of objects: it becomes records, whose stored objects read as
   * one-element arrays. A top-level record's JSON column is rewritten; a nested record's presence
   * column gives way to a JSON column filled from the top-level record's text; below an array
   * nothing is stored of its own. Its fields, now below an array, are read from JSON text and
   * lose their columns. An ancestor's JSON text keeps the objects: reads take them as arrays of
   * one (`objects`).
   */
  private toRecords(node: FieldNode, path: string[], place: Place): void {
    const topLevel = path.length === 1;
    if (node.column !== undefined && !topLevel && place.topColumn === undefined) {
      // a presence column with no JSON text to fill the new column from (not in the layout)
      this.toString(node, path, place);
      return;
    }
    this.reserveColumns();
    const descendants: SchemaChange[] = [];
    forEachNode(node.fields ?? {}, path, (child, p) => {
      if (child.column === undefined) return;
      descendants.push({ op: "drop_column", path: p, column: child.column });
      delete child.column;
    });
    if (node.column === undefined) this.changes.push({ op: "retype_field", path });
    else if (topLevel) this.changes.push({ op: "wrap_in_array", path, column: node.column });
    else {
      const old = node.column;
      node.column = this.allocate();
      this.changes.push(
        {
          op: "add_column",
          path,
          column: node.column,
          type: "JSON",
          backfill: { column: place.topColumn!, path: path.slice(1), wrap: true },
        },
        { op: "drop_column", path, column: old },
      );
    }
    this.changes.push(...descendants);
    node.kind = "records";
    node.fields ??= {};
    if (!topLevel) node.objects = true;
  }

  /** A record, records or array field met a conflicting value: it becomes a STRING of its text. */
  private toString(node: FieldNode, path: string[], place: Place): void {
    const topLevel = path.length === 1;
    const oldType = columnTypeOf(node, topLevel);
    const descendants: SchemaChange[] = [];
    if (node.fields) {
      forEachNode(node.fields, path, (child, p) => {
        this.room++;
        if (child.column !== undefined)
          descendants.push({ op: "drop_column", path: p, column: child.column });
      });
    }
    if (node.column === undefined) {
      this.changes.push({ op: "retype_field", path });
    } else if (oldType === "PRESENCE") {
      // A nested record keeps no text of its own; its objects are recovered from the JSON text of
      // the top-level record above it.
      const old = node.column;
      node.column = this.allocate();
      const add: SchemaChange = { op: "add_column", path, column: node.column, type: "STRING" };
      if (place.topColumn !== undefined) add.backfill = { column: place.topColumn, path: path.slice(1) };
      this.changes.push(add, { op: "drop_column", path, column: old });
    } else {
      this.changes.push({ op: "alter_column", path, column: node.column, from: oldType, to: "STRING" });
    }
    this.changes.push(...descendants);
    node.kind = "scalar";
    node.type = "STRING";
    delete node.fields;
  }
}

/**
 * Widens a source schema in place with one event's fields (`LogEvent.body`) (DESIGN.md §3): new fields get a node
 * and, per the layout, a column; INT64 meeting FLOAT64 becomes FLOAT64; a record meeting an
 * array of objects, or the reverse, is records; any other conflict becomes STRING. Null values add
 * nothing; an empty or all-null array of an unknown field is an array of no type yet. Returns the changes
 * in the order a backend applies them (empty when the schema already covers the event).
 * The fixed fields (`id`, `timestamp`, `event_message`, `project`) never change.
 */
export function widenSchema(schema: SourceSchema, body: JsonObject, maxFields?: number): SchemaChange[] {
  const widener = new Widener(schema, maxFields);
  const place: Place = { path: [], underArray: false };
  for (const key of Object.keys(body)) {
    // own keys only: `constructor` or `toString` is an event's field, not one of the fixed four
    if (Object.hasOwn(FIXED_COLUMNS, key)) continue;
    widener.field(schema.fields, key, body[key]!, place);
  }
  widener.checkRoom();
  return widener.changes;
}
