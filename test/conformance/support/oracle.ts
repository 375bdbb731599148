import { isIP } from "node:net";
import { type ExactJson, FloatNumber, isRecord, parseExactJson } from "./exact-json.ts";

/**
 * The oracle's model of the data: BigQuery's view of the loaded events (DESIGN.md §3), written
 * from the spec in plain TypeScript, sharing no code with the compiler or the backends.
 */

export type Wire = null | boolean | number | string | Wire[] | { [key: string]: Wire };
export type Row = Record<string, Wire>;
type JsonObject = { [key: string]: ExactJson };

export interface LogEvent {
  source: string;
  id: string;
  /** unix µs */
  timestamp: bigint;
  event_message: string | null;
  project: string | null;
  /** the event's `metadata` object; undefined when absent or not an object */
  metadata: JsonObject | undefined;
}

/** logs.all's nine CTEs: source and where the project is read (log-event-shapes.md §0) */
export const LOGS_ALL_CTES = {
  edge_logs: { source: "cloudflare.logs.prod", project: "top" },
  postgres_logs: { source: "postgres.logs", project: "top" },
  function_edge_logs: { source: "deno-relay-logs", project: "metadata.project_ref" },
  function_logs: { source: "deno-subhosting-events", project: "metadata.project_ref" },
  auth_logs: { source: "gotrue.logs.prod", project: "top" },
  realtime_logs: { source: "realtime.logs.prod", project: "metadata.project" },
  storage_logs: { source: "storage.logs.prod.2", project: "metadata.project" },
  postgrest_logs: { source: "postgREST.logs.prod", project: "top" },
  pgbouncer_logs: { source: "pgbouncer.logs.prod", project: "top" },
} as const;
export type CteName = keyof typeof LOGS_ALL_CTES;
export const CTE_NAMES = Object.keys(LOGS_ALL_CTES) as CteName[];

/** ISO 8601 (no zone = UTC, fraction to µs) to unix µs; undefined when malformed */
export function isoMicros(iso: string): bigint | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$/.exec(
    iso,
  );
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  let seconds = BigInt(Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +s!) / 1000);
  if (zone && zone !== "Z") {
    const sign = zone[0] === "-" ? -1n : 1n;
    const digits = zone.slice(1).replace(":", "");
    seconds -= sign * (BigInt(digits.slice(0, 2)) * 3600n + BigInt(digits.slice(2)) * 60n);
  }
  return seconds * 1_000_000n + BigInt((frac ?? "").slice(0, 6).padEnd(6, "0"));
}

/** field path → BigQuery type, inferred over every event of a source (DESIGN.md §3) */
type FieldTypes = Map<string, string>;

function jsonType(v: ExactJson): string {
  if (v === null) return "NULL";
  if (typeof v === "boolean") return "BOOL";
  if (typeof v === "number" || typeof v === "bigint") return "INT64";
  if (v instanceof FloatNumber) return "FLOAT64";
  if (typeof v === "string") return "STRING";
  if (Array.isArray(v)) return v.some(isRecord) ? "records" : "array";
  return "record";
}

function widen(a: string | undefined, b: string): string {
  if (a === undefined || a === "NULL") return b;
  if (b === "NULL" || a === b) return a;
  if ((a === "INT64" && b === "FLOAT64") || (a === "FLOAT64" && b === "INT64")) return "FLOAT64";
  return "STRING";
}

function observe(types: FieldTypes, path: string, v: ExactJson): void {
  types.set(path, widen(types.get(path), jsonType(v)));
  if (isRecord(v)) for (const [k, x] of Object.entries(v)) observe(types, `${path}.${k}`, x);
  else if (Array.isArray(v)) {
    for (const el of v) {
      if (isRecord(el)) for (const [k, x] of Object.entries(el)) observe(types, `${path}.${k}`, x);
      else types.set(`${path}[]`, widen(types.get(`${path}[]`), jsonType(el)));
    }
  }
}

export class EventStore {
  readonly events: LogEvent[] = [];
  private readonly types = new Map<string, FieldTypes>();

  constructor(loads: Record<string, string[]>) {
    for (const [source, lines] of Object.entries(loads)) {
      const types: FieldTypes = new Map();
      this.types.set(source, types);
      for (const line of lines) {
        const body = parseExactJson(line) as JsonObject;
        const ts = body.timestamp;
        const timestamp =
          typeof ts === "string"
            ? isoMicros(ts)
            : typeof ts === "number" || typeof ts === "bigint"
              ? BigInt(ts)
              : undefined;
        if (timestamp === undefined) throw new Error(`conformance events carry timestamps: ${line}`);
        const metadata = isRecord(body.metadata) ? body.metadata : undefined;
        if (metadata) observe(types, "metadata", metadata);
        this.events.push({
          source,
          id: String(body.id),
          timestamp,
          event_message: typeof body.event_message === "string" ? body.event_message : null,
          project: typeof body.project === "string" ? body.project : null,
          metadata,
        });
      }
    }
  }

  /** events of a source, in no particular order */
  source(source: string): LogEvent[] {
    return this.events.filter((e) => e.source === source);
  }

  /**
   * The rows of one of logs.all's CTEs for a request: project filter (where the CTE reads it),
   * start exclusive, end inclusive, each skipped when absent or empty; newest first.
   */
  cte(
    name: CteName,
    params: { project: string; iso_timestamp_start?: string; iso_timestamp_end?: string },
  ): LogEvent[] {
    const def = LOGS_ALL_CTES[name];
    const start = params.iso_timestamp_start ? isoMicros(params.iso_timestamp_start) : undefined;
    const end = params.iso_timestamp_end ? isoMicros(params.iso_timestamp_end) : undefined;
    return this.source(def.source)
      .filter((e) => (def.project === "top" ? e.project : field(e, def.project)) === params.project)
      .filter(
        (e) => (start === undefined || e.timestamp > start) && (end === undefined || e.timestamp <= end),
      )
      .sort((a, b) => (a.timestamp < b.timestamp ? 1 : a.timestamp > b.timestamp ? -1 : 0));
  }

  /** `metadata` as the wire shows it: an array of one record, every nested object one more */
  wireMetadata(e: LogEvent): Wire {
    if (!e.metadata) return [];
    return [this.wireRecord(e.source, "metadata", e.metadata)];
  }

  /** a value at a field path, as the wire shows it, typed by the source's inferred schema */
  wireValue(source: string, path: string, v: ExactJson | undefined): Wire {
    const type = this.types.get(source)?.get(path);
    if (v === undefined || v === null) return null;
    if (type === "record") return isRecord(v) ? [this.wireRecord(source, path, v)] : null;
    if (type === "records")
      return (v as ExactJson[]).map((el) => (isRecord(el) ? this.wireRecord(source, path, el) : null));
    if (type === "array")
      return (v as ExactJson[]).map((el) => scalarWire(this.types.get(source)?.get(`${path}[]`), el));
    return scalarWire(type, v);
  }

  private wireRecord(source: string, path: string, obj: JsonObject): { [key: string]: Wire } {
    const out: { [key: string]: Wire } = {};
    for (const [k, v] of Object.entries(obj)) out[k] = this.wireValue(source, `${path}.${k}`, v);
    return out;
  }
}

function scalarWire(type: string | undefined, v: ExactJson): Wire {
  if (v === null) return null;
  if (v instanceof FloatNumber) return type === "STRING" ? String(v.value) : v.value;
  if (typeof v === "bigint") return int64Wire(v);
  if (type === "STRING" && typeof v !== "string")
    return typeof v === "object" ? JSON.stringify(v) : String(v);
  return v as Wire;
}

/** INT64 on the wire: a JSON number, a string only beyond ±2^53 (DESIGN.md §4) */
export function int64Wire(v: bigint | number): number | string {
  const b = BigInt(v);
  return b > 9007199254740992n || b < -9007199254740992n ? b.toString() : Number(b);
}

/**
 * A scalar below `metadata` by a dotted path (`request.headers.x_real_ip`), or `metadata.x`;
 * null when any step is missing, the way a chain of `cross join unnest` + field access sees it.
 */
export function field(e: LogEvent, path: string): string | number | boolean | bigint | null {
  let v: ExactJson | undefined = e.metadata;
  for (const step of path.replace(/^metadata\./, "").split(".")) {
    if (!isRecord(v)) return null;
    v = v[step];
  }
  if (v instanceof FloatNumber) return v.value;
  if (v === undefined || v === null || typeof v === "object") return null;
  return v;
}

/** true when every object on the path exists (a `cross join unnest` chain keeps the row) */
export function hasRecord(e: LogEvent, path: string): boolean {
  let v: ExactJson | undefined = e.metadata;
  if (!isRecord(v)) return false;
  const steps = path.replace(/^metadata\.?/, "");
  if (steps === "") return true;
  for (const step of steps.split(".")) {
    v = (v as JsonObject)[step];
    if (!isRecord(v)) return false;
  }
  return true;
}

export const wireTs = (micros: bigint): number => Number(micros);

const UNIT_MICROS = { minute: 60_000_000n, hour: 3_600_000_000n, day: 86_400_000_000n } as const;
/** TIMESTAMP_TRUNC in UTC */
export function trunc(micros: bigint, unit: keyof typeof UNIT_MICROS): bigint {
  const u = UNIT_MICROS[unit];
  return micros - (((micros % u) + u) % u);
}

/** DATETIME on the wire: `YYYY-MM-DDTHH:MM:SS`, `.ffffff` only when the fraction is not zero */
export function datetimeWire(micros: bigint): string {
  const ms = Number(micros / 1000n - (micros % 1000n < 0n ? 1n : 0n));
  const base = new Date(ms).toISOString().slice(0, 19);
  const frac = ((micros % 1_000_000n) + 1_000_000n) % 1_000_000n;
  return frac === 0n ? base : `${base}.${frac.toString().padStart(6, "0")}`;
}

export function dateWire(micros: bigint): string {
  return datetimeWire(micros).slice(0, 10);
}

/** APPROX_QUANTILES as DESIGN.md §3 pins it: the value at rank max(1, ceil(q·n)), nulls ignored */
export function quantile(values: (number | null)[], q: number): number | null {
  const xs = values.filter((v): v is number => v !== null).sort((a, b) => a - b);
  if (xs.length === 0) return null;
  return xs[Math.max(1, Math.ceil(q * xs.length)) - 1]!;
}

/** rows grouped by a key, in first-seen order */
export function groupBy<T, K>(items: T[], key: (t: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const it of items) {
    const k = key(it);
    const g = groups.get(k);
    if (g) g.push(it);
    else groups.set(k, [it]);
  }
  return groups;
}

type Sortable = string | number | bigint | boolean | null;
/** sort by keys; a key is ascending unless wrapped in desc(); NULLs first ascending, last descending (BigQuery) */
export function sortBy<T>(items: T[], ...keys: ((t: T) => Sortable | { desc: Sortable })[]): T[] {
  return [...items].sort((a, b) => {
    for (const key of keys) {
      let x = key(a);
      let y = key(b);
      let dir = 1;
      if (x !== null && typeof x === "object") {
        dir = -1;
        x = x.desc;
        y = (y as { desc: Sortable }).desc;
      }
      const c = compareSortable(x, y as Sortable);
      if (c !== 0) return c * dir;
    }
    return 0;
  });
}
export const desc = (v: Sortable): { desc: Sortable } => ({ desc: v });

function compareSortable(x: Sortable, y: Sortable): number {
  if (x === y) return 0;
  if (x === null) return -1;
  if (y === null) return 1;
  if (typeof x === "string" && typeof y === "string") return x < y ? -1 : x > y ? 1 : 0; // byte order for ASCII
  return Number(x) < Number(y) ? -1 : Number(x) > Number(y) ? 1 : 0;
}

/**
 * PII redaction as DESIGN.md §7 states it: an IPv4 or IPv6 address inside any string value
 * becomes `REDACTED`; keys, numbers and everything else stay. A candidate is a run of address
 * characters; its longest prefix that `isIP` accepts is the address (`10.0.0.1:5432` keeps its
 * port, `[2001:db8::1]:443` its brackets and port).
 */
export function redact(v: Wire): Wire {
  if (typeof v === "string") return redactText(v);
  if (Array.isArray(v)) return v.map(redact);
  if (v !== null && typeof v === "object") {
    const out: { [key: string]: Wire } = {};
    for (const [k, x] of Object.entries(v)) out[k] = redact(x);
    return out;
  }
  return v;
}

function redactText(s: string): string {
  return s.replace(/[0-9A-Fa-f:.]+/g, (run) => {
    let out = "";
    let i = 0;
    while (i < run.length) {
      let end = -1;
      for (let j = run.length; j > i; j--) {
        if (isIP(run.slice(i, j))) {
          end = j;
          break;
        }
      }
      if (end === -1) {
        // not an address here: keep up to the next separator and try after it
        const next = run.slice(i + 1).search(/[:.]/);
        const stop = next === -1 ? run.length : i + 1 + next + 1;
        out += run.slice(i, stop);
        i = stop;
      } else {
        out += "REDACTED";
        i = end;
      }
    }
    return out;
  });
}
