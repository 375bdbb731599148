import type { Backend, WireValue } from "@qes/core";
import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { ingestBatch } from "../support/ingest-batch.ts";
import { runSql } from "../support/run-sql.ts";
import { useBackend } from "../support/use-backend.ts";

// Differential probe: hostile event shapes ingested the way the ingest API stores them
// (`Backend.ingest`, one call per request), then queried with the BigQuery SQL dashboards send, on
// every backend. Expected rows are written from BigQuery's documented semantics and DESIGN.md §3's
// departures, never copied from an engine. Cases marked `found` failed on a backend before its
// fix; the rest are probes that found every backend already agreeing, kept so that the next
// person sees what was tried (the stored rows themselves: ../http/ingest-event-values.test.ts and
// ../http/ingest-shipper-probe.test.ts).

type Row = Record<string, WireValue>;

interface ShapeCase {
  name: string;
  sql: string;
  expect: Row[];
  /** the backend that answered otherwise before its fix, and what it answered */
  found?: string;
}

const AT = "2025-01-15T11:00:00Z";
/** a key far longer than PostgreSQL's 63-byte identifiers (fields are columns `f<N>` there) */
const LONG_KEY = "k".repeat(300);
const J = JSON.stringify;

/** A TIMESTAMP's wire value (unix µs; text beyond ±2^53) of `YYYY-MM-DDTHH:MM:SS[.ffffff]Z`, years 1 to 9999. */
function ts(iso: string): WireValue {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?Z$/.exec(iso);
  if (!m) throw new Error(`ts(): bad instant ${iso}`);
  const ms = Date.parse(`${m[1]}Z`);
  if (Number.isNaN(ms)) throw new Error(`ts(): bad instant ${iso}`);
  const micros = BigInt(ms) * 1000n + BigInt((m[2] ?? "").padEnd(6, "0"));
  return micros >= -(2n ** 53n) && micros <= 2n ** 53n ? Number(micros) : String(micros);
}

/** Days from 1970-01-01 to a `YYYY-MM-DD` date. */
const dayNumber = (date: string) => Date.parse(`${date}T00:00:00Z`) / 86_400_000;
/** The Sunday that starts the week of a `YYYY-MM-DD` date (BigQuery's WEEK), as its day number. */
const sundayOf = (date: string) => dayNumber(date) - new Date(`${date}T00:00:00Z`).getUTCDay();

// ------------------------------------------------------------------------------------- events

/** Instants near and beyond the ends of every engine's own date types (ClickHouse's Date: 1970 … 2149). */
const INSTANTS = {
  y1: "0001-03-05T10:11:12.5Z",
  pre1970: "1969-12-31T23:59:59.5Z",
  y1900: "1900-02-28T12:34:56.789012Z",
  y2150: "2150-07-04T01:02:03Z",
  y9999: "9999-12-31T23:59:59.999999Z",
  leap: "2024-02-29T12:00:00.000001Z",
} as const;
type InstantId = keyof typeof INSTANTS;

/** a string whose JSON text escapes: lowercase `\u001b`, `\u000b`, `\u001f`; U+2028/2029 as they are */
const ESCAPED = '\u001b[31mred\u001b[0m \u000b\u001f \u2028\u2029 \\u001F "q"';

/** Each source's requests (one `ingest` call each), in order; every event a JSON text. */
const SOURCES: Record<string, string[][]> = {
  "shape.keys": [
    [
      J({
        id: "k1",
        timestamp: AT,
        "a.b": 1,
        "sp ace": 2,
        "q'uote": 3,
        'd"q': 4,
        "e\u0301": 7,
        שלום: 8,
        "😀": 9,
        select: 10,
        from: 11,
        order: 12,
        group: 13,
        Status: "S",
        status: "s",
        "0": 14,
        "1e3": 15,
        metadata: { "a.b": "x", "sp ace": "y", select: "z", "": "empty", "😀": "e" },
      }),
      J({ id: "k2", timestamp: AT, select: 20, Status: "T" }),
    ],
  ],
  // a key with a dot beside a record holding the same path, at the top and inside a record
  "shape.dotted": [
    [J({ id: "d1", timestamp: AT, "q.r": 3, q: { r: 4 }, metadata: { "a.b": 1, a: { b: 2 } } })],
  ],
  // a key that is the empty string, at the top and inside a record (a shipper's `{"": …}`)
  "shape.empty.key": [[J({ id: "e1", timestamp: AT, "": 1, a: 2, metadata: { "": "m" } })]],
  // keys that are one another's case (non-ASCII): JavaScript's toLowerCase maps each first to the second
  "shape.fold": [
    [J({ id: "f1", timestamp: AT, "\u01c5": 1, "\u01c6": 2, "\u0130": 3, "i\u0307": 4, Σ: 5, σ: 6 })],
  ],
  "shape.values": [
    [
      J({
        id: "v1",
        timestamp: AT,
        metadata: {
          n: 1,
          s: "a%b_c\\d",
          arr: [1, 2, 3],
          recs: [{ x: 1, y: "a" }, { x: 2 }],
          deep: { r: [{ q: { z: [{ w: 1 }] } }] },
        },
      }),
      J({ id: "v2", timestamp: AT, metadata: { n: 2, s: "line1\nline2", arr: [], recs: [] } }),
      J({ id: "v3", timestamp: AT, metadata: { n: null, s: null, arr: null, recs: null } }),
      J({ id: "v4", timestamp: AT }),
      J({ id: "v5", timestamp: AT, metadata: { n: 3, s: "x".repeat(5000), arr: [4], recs: { x: 9 } } }),
    ],
  ],
  "shape.int64": [
    [
      `{"id":"b1","timestamp":"${AT}","i":9223372036854775807,"j":-9223372036854775808,"k":9007199254740993,"f":1e308,"z":-0.0}`,
      `{"id":"b2","timestamp":"${AT}","i":1,"j":-1,"k":-9007199254740993,"f":0.1,"z":0}`,
    ],
  ],
  // the second request widens code, flag and m.code to STRING, m.ok to STRING
  "shape.widened": [
    [
      J({ id: "w1", timestamp: AT, code: 200, flag: true, m: { code: 404, ok: true } }),
      J({ id: "w2", timestamp: AT, code: 500, flag: false, m: { code: 500 } }),
    ],
    [
      J({ id: "w3", timestamp: AT, code: "abc", flag: "yes", m: { code: "x", ok: "maybe" } }),
      J({ id: "w4", timestamp: AT, code: "200", flag: "true", m: { code: 1.5 } }),
    ],
  ],
  // a record and arrays widened to STRING by a later request
  "shape.record-to-text": [
    [J({ id: "a", timestamp: AT, m: { z: 1, a: "x y", n: { k: [1, 2] } }, arr: [1, 2] })],
    [J({ id: "b", timestamp: AT, m: "plain", arr: ["s", 1.5] })],
  ],
  // objects read as STRING whose strings hold characters JSON escapes: ESC and other control
  // characters, U+2028/U+2029, and a backslash before "u001F" (text, not an escape)
  "shape.escaped-text": [
    [
      J({
        id: "e1",
        timestamp: AT,
        m: { n: { s: ESCAPED } },
        recs: [{ x: { s: ESCAPED } }],
        mix: [{ s: ESCAPED }, ESCAPED],
      }),
    ],
    [J({ id: "e2", timestamp: AT, m: { n: "plain" }, recs: [{ x: "plain" }], mix: ["plain"] })],
  ],
  // arrays of strings only, whose text looks like numbers to a quick scan (16 digits, `1e5`)
  "shape.digit-strings": [
    [
      J({ id: "d1", timestamp: AT, ids: ["req 1736938800123456", "x"], words: ["up 1e5 times"] }),
      J({ id: "d2", timestamp: AT, ids: ["1736938800123456"], words: [] }),
      // doubles JavaScript writes as integers of 20 and 21 digits, beside a string
      J({ id: "d3", timestamp: AT, ids: ["s", 2 ** 64, 1.2345678901234568e20], words: [2 ** 64] }),
    ],
  ],
  // arrays of numbers inside records, widened to STRING by a later request, read through UNNEST
  // of the record (where the array's text is the engine's, not the stored)
  "shape.widened-array-in-record": [
    [J({ id: "w1", timestamp: AT, m: { xs: [1e21, 0.5, 1e-7] }, rs: [{ xs: [1e21, 2] }] })],
    [J({ id: "w2", timestamp: AT, m: { xs: ["s"] }, rs: [{ xs: ["s"] }] })],
  ],
  // arrays sent as null or left out, at the top, in a record and in records
  "shape.null-arrays": [
    [
      J({ id: "n1", timestamp: AT, m: { xs: null }, ys: null, rs: [{ zs: null, os: { a: 1 } }] }),
      J({
        id: "n2",
        timestamp: AT,
        m: { xs: ["a"] },
        ys: ["b"],
        rs: [{ zs: ["c"], os: [{ a: 2 }, { a: 3 }] }],
      }),
      J({ id: "n3", timestamp: AT, m: { k: 1 }, rs: [{ k: 1 }] }),
    ],
  ],
  "shape.arrays": [
    [
      J({ id: "a", timestamp: AT, nest: [[1, 2], [3]], mix: [1, "a", true, null, 1.5], fl: [1, 2.5] }),
      J({ id: "b", timestamp: AT, nest: [], mix: [], fl: [3] }),
      J({ id: "c", timestamp: AT }),
    ],
  ],
  "shape.json-text": [
    [
      J({ id: "a", timestamp: AT, event_message: J({ a: 1, b: { c: [1, 2, { d: "x" }] }, "e.f": "dot" }) }),
      J({ id: "b", timestamp: AT, event_message: "not json {" }),
      J({ id: "c", timestamp: AT, event_message: '{"a": "\\u00e9\\n", "c": true}' }),
    ],
  ],
  "shape.odd-keys": [
    [
      J({
        id: "o1",
        timestamp: AT,
        [LONG_KEY]: 1,
        " ": "space",
        "\t": "tab",
        _PARTITIONTIME: "p",
        metadata: { timestamp: "inner-ts", id: "inner-id", [LONG_KEY]: 2 },
      }),
      J({ id: "o2", timestamp: AT, metadata: { timestamp: 5 } }),
    ],
  ],
  "shape.unicode": [
    ["😀abc", "e\u0301x", "A😀B😀C", "日本語", ""].map((s, i) => J({ id: `u${i}`, timestamp: AT, s })),
  ],
  "shape.times": [Object.entries(INSTANTS).map(([id, t]) => J({ id, timestamp: t, day: t.slice(0, 10) }))],
  // fields inside a record widened by a later request: an INT64 to STRING, a nested record to
  // STRING and to records, beside a 20-digit number (JSON.stringify's 1.8446744073709552e19)
  "shape.widened-in-record": [
    [
      J({
        id: "x1",
        timestamp: AT,
        m: {
          i: 5,
          g: 2 ** 64,
          n: { a: 1e21, b: [1.5e300, 2 ** 64, 2e-300], c: 'x:1e21 " 12345678901234567890123' },
          r: { a: 1 },
        },
      }),
    ],
    [J({ id: "x2", timestamp: AT, m: { i: "s", n: "s", r: [{ a: 2 }, { a: 3 }] } })],
  ],
  // arrays of numbers and a record field widened to STRING by a later request, read in the engine
  "shape.widened-arrays": [
    [
      J({
        id: "y1",
        timestamp: AT,
        tags: [1e21, 1e-7, 0.5, 42],
        recs: [{ x: 1e21 }, { x: 0.1 }],
        nest: [[1e21, "1e21"], { a: 1.5e300 }],
      }),
    ],
    [J({ id: "y2", timestamp: AT, tags: ["s"], recs: [{ x: "s" }] })],
  ],
  // doubles in records and JSON text that ClickHouse's RapidJSON read as neighbouring doubles
  "shape.json-doubles": [
    [
      J({
        id: "d1",
        timestamp: AT,
        event_message: J({ a: "x", f: 111.33861541748047, g: 1.2345678901234568e20, h: 2 ** 64 }),
        recs: [{ f: 111.33861541748047 }, { f: 1.2345678901234568e20 }, { f: 0.30000000000000004 }],
      }),
    ],
  ],
  // a GoTrue-like JSON line with numbers as other writers spell them (the JSON text kept as written)
  "shape.json-numbers": [
    [
      J({
        id: "j1",
        timestamp: AT,
        event_message:
          '{"duration":15000000,"ratio":0.30000000000000004,"big":9007199254740993,"huge":1e21,"one":1.0,"exp":1E+2,"negzero":-0.0,"beyond":12345678901234567890,"tiny":1.5E-10,"arr":[1e21,2.50],"s":"1e21"}',
      }),
    ],
  ],
  // edge-log numbers as JSON texts (JSON.stringify would write -0.0 as 0): INT64 status codes and
  // counts, FLOAT64 coordinates with a -0.0, 0.1 + 0.2's double, 1e21, 1e-7, arrays of them
  "shape.number-text": [
    [
      `{"id":"n1","timestamp":"2025-01-15T10:00:00.000100Z","metadata":{"response":{"status_code":200},"request":{"cf":{"latitude":37.7749,"longitude":-122.4194,"botManagement":{"verifiedBot":false}}},"delta":3,"ratio":0.30000000000000004,"huge":1e21,"tiny":1e-7,"samples":[1.5,-0.0,1e21,1e-7],"flags":[true,false]}}`,
      `{"id":"n2","timestamp":"2025-01-15T10:00:00.12Z","metadata":{"response":{"status_code":404},"request":{"cf":{"latitude":-0.0,"longitude":0,"botManagement":{"verifiedBot":true}}},"delta":-5,"ratio":2.5,"huge":123456789012345680000,"tiny":1.5e-300,"samples":[],"flags":[]}}`,
      `{"id":"n3","timestamp":"2025-01-15T10:00:00Z"}`,
    ],
  ],
};

// ------------------------------------------------------------------------------------- cases

/** Rows `{id, t}` over every instant, in id order, `t` from the function given. */
function perInstant(t: (id: InstantId) => WireValue): Row[] {
  return (Object.keys(INSTANTS) as InstantId[]).sort().map((id) => ({ id, t: t(id) }));
}

/** Where TIMESTAMP_TRUNC (UTC) and DATE_TRUNC land, per part and instant: read off a calendar. */
const TRUNCATED: Record<string, Record<InstantId, string>> = {
  second: {
    y1: "0001-03-05T10:11:12Z",
    pre1970: "1969-12-31T23:59:59Z",
    y1900: "1900-02-28T12:34:56Z",
    y2150: "2150-07-04T01:02:03Z",
    y9999: "9999-12-31T23:59:59Z",
    leap: "2024-02-29T12:00:00Z",
  },
  hour: {
    y1: "0001-03-05T10:00:00Z",
    pre1970: "1969-12-31T23:00:00Z",
    y1900: "1900-02-28T12:00:00Z",
    y2150: "2150-07-04T01:00:00Z",
    y9999: "9999-12-31T23:00:00Z",
    leap: "2024-02-29T12:00:00Z",
  },
  day: {
    y1: "0001-03-05",
    pre1970: "1969-12-31",
    y1900: "1900-02-28",
    y2150: "2150-07-04",
    y9999: "9999-12-31",
    leap: "2024-02-29",
  },
  // weeks from Sunday: 0001-03-05 was a Monday, 1969-12-31 a Wednesday, 9999-12-31 a Friday
  week: {
    y1: "0001-03-04",
    pre1970: "1969-12-28",
    y1900: "1900-02-25",
    y2150: "2150-06-28",
    y9999: "9999-12-26",
    leap: "2024-02-25",
  },
  isoweek: {
    y1: "0001-03-05",
    pre1970: "1969-12-29",
    y1900: "1900-02-26",
    y2150: "2150-06-29",
    y9999: "9999-12-27",
    leap: "2024-02-26",
  },
  month: {
    y1: "0001-03-01",
    pre1970: "1969-12-01",
    y1900: "1900-02-01",
    y2150: "2150-07-01",
    y9999: "9999-12-01",
    leap: "2024-02-01",
  },
  quarter: {
    y1: "0001-01-01",
    pre1970: "1969-10-01",
    y1900: "1900-01-01",
    y2150: "2150-07-01",
    y9999: "9999-10-01",
    leap: "2024-01-01",
  },
  year: {
    y1: "0001-01-01",
    pre1970: "1969-01-01",
    y1900: "1900-01-01",
    y2150: "2150-01-01",
    y9999: "9999-01-01",
    leap: "2024-01-01",
  },
  // the Monday of the week holding 4 January: 1969-12-31 is in 1970's first week; 2150 began on a Thursday
  isoyear: {
    y1: "0001-01-01",
    pre1970: "1969-12-29",
    y1900: "1900-01-01",
    y2150: "2149-12-29",
    y9999: "9999-01-04",
    leap: "2024-01-01",
  },
};

/** the days around 1970-01-01, and the first and last days of quarters in leap and common years */
const WEEK_DAYS = [
  ...Array.from({ length: 10 }, (_, i) => new Date((i - 5) * 86_400_000).toISOString().slice(0, 10)),
  ...[
    "2000-07-01",
    "2024-03-31",
    "2024-04-01",
    "2024-06-30",
    "2024-07-01",
    "2024-10-01",
    "2024-12-31",
    "2100-04-01",
  ],
];

const asInstant = (dayOrInstant: string) =>
  ts(dayOrInstant.length === 10 ? `${dayOrInstant}T00:00:00Z` : dayOrInstant);

const TRUNCATION_CASES: ShapeCase[] = [
  ...Object.entries(TRUNCATED).map(([part, at]) => ({
    name: `TIMESTAMP_TRUNC(…, ${part.toUpperCase()}) from year 1 to 9999`,
    sql: `select id, timestamp_trunc(timestamp, ${part}) as t from \`shape.times\` order by id`,
    expect: perInstant((id) => asInstant(at[id])),
    ...(part === "second"
      ? {}
      : {
          found:
            "ClickHouse: toStartOf* answered 1970-01-01 before 1970, a time in 2042 for year 1, 2149 for 9999",
        }),
  })),
  ...Object.entries(TRUNCATED)
    .filter(([part]) => !["second", "hour", "day"].includes(part))
    .map(([part, at]) => ({
      name: `DATE_TRUNC(DATE(…), ${part.toUpperCase()}) from year 1 to 9999`,
      sql: `select id, date_trunc(date(timestamp), ${part}) as t from \`shape.times\` order by id`,
      expect: perInstant((id) => at[id]),
      found: "ClickHouse: clamped to 1970-01-01 … 2149-06-06",
    })),
  {
    name: "DATETIME_TRUNC by MINUTE and MONTH before 1970 and after 2149",
    sql: "select id, datetime_trunc(datetime(timestamp), minute) as mi, datetime_trunc(datetime(timestamp), month) as mo from `shape.times` where id in ('pre1970', 'y2150') order by id",
    expect: [
      { id: "pre1970", mi: "1969-12-31T23:59:00", mo: "1969-12-01T00:00:00" },
      { id: "y2150", mi: "2150-07-04T01:02:00", mo: "2150-07-01T00:00:00" },
    ],
    found: "ClickHouse: 1970-01-01T00:00:00 for both before 1970",
  },
  {
    name: "UNIX_SECONDS and UNIX_MILLIS round toward the past; TIMESTAMP_DIFF toward zero, exactly at 9999",
    sql: "select id, unix_seconds(timestamp) as s, unix_millis(timestamp) as ms, timestamp_diff(timestamp, timestamp '1970-01-01', second) as ds, timestamp_diff(timestamp, timestamp '1970-01-01', millisecond) as dms from `shape.times` where id in ('y1', 'pre1970', 'y9999') order by id",
    expect: [
      { id: "pre1970", s: -1, ms: -500, ds: 0, dms: -500 },
      { id: "y1", s: -62130116928, ms: -62130116927500, ds: -62130116927, dms: -62130116927500 },
      { id: "y9999", s: 253402300799, ms: 253402300799999, ds: 253402300799, dms: 253402300799999 },
    ],
    found:
      "DuckDB: 253402300800 for 9999-12-31 23:59:59.999999 (divided as DOUBLE) in all four; ClickHouse: in UNIX_SECONDS and UNIX_MILLIS",
  },
  {
    name: "TIMESTAMP_TRUNC of a TIMESTAMP_TRUNC in a time zone",
    sql: "select id, timestamp_trunc(timestamp_trunc(timestamp, day, 'America/New_York'), week(monday), 'America/New_York') as t from `shape.times` where id in ('pre1970', 'leap') order by id",
    // New York's Wednesday 1969-12-31 and Thursday 2024-02-29 (EST): their Mondays' midnights
    expect: [
      { id: "leap", t: ts("2024-02-26T05:00:00Z") },
      { id: "pre1970", t: ts("1969-12-29T05:00:00Z") },
    ],
    found:
      "ClickHouse: 'too large' (AST past 50,000 nodes) — the truncation arithmetic wrote its value up to eight times, the zone's conversion included",
  },
  {
    name: "DATE_TRUNC and DATE_DIFF by WEEK(<day>) across 1970-01-01, QUARTER in leap and common years",
    sql: `select d, date_trunc(d, week(wednesday)) as we, date_trunc(d, week(saturday)) as sa, date_diff(d, date '1970-01-01', week(thursday)) as th, date_trunc(d, quarter) as q from unnest([${WEEK_DAYS.map((d) => `date '${d}'`).join(", ")}]) as d order by d`,
    expect: WEEK_DAYS.map((d) => {
      const n = dayNumber(d);
      // 1970-01-01 (day 0) was a Thursday: a week from weekday w (Sunday 0) starts on the last such day
      const start = (w: number) => n - ((((n + 4 - w) % 7) + 7) % 7);
      const iso = (day: number) => new Date(day * 86_400_000).toISOString().slice(0, 10);
      const [y, m] = d.split("-") as [string, string];
      const q = `${y}-${String(Math.floor((Number(m) - 1) / 3) * 3 + 1).padStart(2, "0")}-01`;
      return { d, we: iso(start(3)), sa: iso(start(6)), th: Math.floor(n / 7), q };
    }),
  },
  {
    name: "DATE_DIFF by DAY, WEEK, MONTH and YEAR from year 1 to 9999",
    sql: "select id, date_diff(date(timestamp), date '1970-01-01', day) as d, date_diff(date(timestamp), date '1970-01-01', week) as w, date_diff(date(timestamp), date '1970-01-01', month) as m, date_diff(date(timestamp), date '1970-01-01', year) as y from `shape.times` order by id",
    expect: (Object.keys(INSTANTS) as InstantId[]).sort().map((id) => {
      const day = INSTANTS[id].slice(0, 10);
      const [y, m] = day.split("-").map(Number) as [number, number];
      return {
        id,
        d: dayNumber(day),
        w: (sundayOf(day) - sundayOf("1970-01-01")) / 7,
        m: y * 12 + m - (1970 * 12 + 1),
        y: y - 1970,
      };
    }),
    found:
      "ClickHouse: DAY 0 before 1970 and 65535 after 2149 (toRelativeDayNum), WEEK one short across 1970-01-01, MONTH 65,536 short at 9999",
  },
  {
    name: "CAST of date text before 1900 and after 2299",
    sql: "select cast('1850-06-01' as date) as a, safe_cast('0001-01-01' as date) as b, cast('9999-12-31' as date) as c, cast('1600-02-29' as date) as d, safe_cast('1900-02-29' as date) as e",
    expect: [{ a: "1850-06-01", b: "0001-01-01", c: "9999-12-31", d: "1600-02-29", e: null }],
    found: "ClickHouse: 1900-01-01 for every date before 1900, 2299-12-31 after",
  },
  {
    name: "CAST of an ingested date string to DATE and TIMESTAMP, year 1 to 9999",
    sql: "select id, cast(day as date) as d, cast(day as timestamp) as t from `shape.times` order by id",
    expect: (Object.keys(INSTANTS) as InstantId[]).sort().map((id) => {
      const day = INSTANTS[id].slice(0, 10);
      return { id, d: day, t: ts(`${day}T00:00:00Z`) };
    }),
    found: "ClickHouse: 'Invalid date: no such day' (422) for a day of a year outside 1900 … 2299",
  },
  {
    name: "timestamps before 1970 and at the ends of the range read back, ordered and filtered",
    sql: "select id, timestamp from `shape.times` where timestamp < '1970-01-01' order by timestamp",
    expect: [
      { id: "y1", timestamp: ts(INSTANTS.y1) },
      { id: "y1900", timestamp: ts(INSTANTS.y1900) },
      { id: "pre1970", timestamp: ts(INSTANTS.pre1970) },
    ],
  },
  {
    name: "FORMAT_TIMESTAMP, DATE and EXTRACT from year 1 to 9999",
    sql: "select id, format_timestamp('%Y-%m-%d %H:%M:%E6S', timestamp) as f, date(timestamp) as d, extract(year from timestamp) as y, extract(dayofweek from timestamp) as dow from `shape.times` where id in ('y1', 'pre1970', 'y9999') order by id",
    expect: [
      { id: "pre1970", f: "1969-12-31 23:59:59.500000", d: "1969-12-31", y: 1969, dow: 4 },
      { id: "y1", f: "0001-03-05 10:11:12.500000", d: "0001-03-05", y: 1, dow: 2 },
      { id: "y9999", f: "9999-12-31 23:59:59.999999", d: "9999-12-31", y: 9999, dow: 6 },
    ],
  },
];

const VALUE_CASES: ShapeCase[] = [
  {
    name: "JSON_VALUE and JSON_QUERY of event_message text",
    sql: "select id, json_value(event_message, '$.a') as a, json_value(event_message, '$.\"e.f\"') as ef, json_query(event_message, '$.b') as b, json_value(event_message, '$.c') as c from `shape.json-text` order by id",
    expect: [
      { id: "a", a: "1", ef: "dot", b: '{"c":[1,2,{"d":"x"}]}', c: null },
      { id: "b", a: null, ef: null, b: null, c: null },
      { id: "c", a: "é\n", ef: null, b: null, c: "true" },
    ],
    found:
      "PostgreSQL: 500 'cannot start subtransactions during a parallel operation' (qes_json_or_null, its cast's error caught in a subtransaction, was marked PARALLEL SAFE)",
  },
  {
    name: "ARRAY_TO_STRING of an empty, a missing and a mixed array",
    sql: "select id, array_to_string(mix, '|') as s, array_to_string(fl, ',') as f from `shape.arrays` order by id",
    expect: [
      { id: "a", s: "1|a|true|1.5", f: "1,2.5" },
      { id: "b", s: "", f: "3" },
      { id: "c", s: null, f: null },
    ],
    found: "PostgreSQL: NULL for the empty array (string_agg of no rows); ClickHouse: '' for the missing one",
  },
  {
    name: "ARRAY_TO_STRING of an array of NULLs only",
    sql: "select array_to_string([cast(null as string), cast(null as string)], ',') as a, array_to_string(['x', cast(null as string)], ',') as b",
    expect: [{ a: "", b: "x" }],
    found: "DuckDB: NULL (its array_to_string of NULLs only)",
  },
  {
    name: "SAFE_CAST of an INT64 past 2^53 to FLOAT64, of a BOOL to INT64, of a FLOAT64 to STRING",
    sql: "select id, safe_cast(i as float64) as f, safe_cast(i > 1 as int64) as b, safe_cast(f as string) as s, safe_cast(cast(k as float64) as string) as ks from `shape.int64` order by id",
    expect: [
      // the nearest FLOAT64 of 2^63-1; a FLOAT64's text as core spells numbers (docs/compiler.md)
      { id: "b1", f: 2 ** 63, b: 1, s: "1e+308", ks: "9007199254740992" },
      { id: "b2", f: 1, b: 0, s: "0.1", ks: "-9007199254740992" },
    ],
    found:
      "ClickHouse: NULL for 2^63-1 as FLOAT64 and its own text of a FLOAT64; PostgreSQL: 'cannot cast type boolean to bigint' (422); DuckDB: its own text of a FLOAT64",
  },
  {
    name: "CAST and SAFE_CAST of FLOAT64 to INT64: exact past 15 digits, half away from zero, -2^63 in range",
    sql: "select cast(4503599627370497.0 as int64) as a, safe_cast(-4503599627370497.0 as int64) as b, cast(1732700000123457.0 as int64) as c, cast(0.49999999999999994 as int64) as d, safe_cast(-2.5 as int64) as e, safe_cast(-9.2233720368547758e18 as int64) as f, safe_cast(9.2233720368547758e18 as int64) as g",
    expect: [
      {
        a: 4503599627370497,
        b: -4503599627370497,
        c: 1732700000123457,
        d: 0,
        e: -3,
        f: "-9223372036854775808",
        g: null,
      },
    ],
    found:
      "PostgreSQL: rounded through numeric, which keeps a double's 15 significant digits (2^52 + 1 was 4503599627370500, a µs time lost its last digit, -2^63 was NULL); ClickHouse: floor(x + 0.5) rounded the sum (2^52 + 1 was 2^52 + 2, 0.49999999999999994 was 1)",
  },
  {
    name: "INT64 at ±2^63 and past 2^53: read, cast to text, aggregated",
    sql: "select id, i, j, k, cast(i as string) as si, cast(k as string) as sk, z = 0 as zero from `shape.int64` order by id",
    expect: [
      {
        id: "b1",
        i: "9223372036854775807",
        j: "-9223372036854775808",
        k: "9007199254740993",
        si: "9223372036854775807",
        sk: "9007199254740993",
        zero: true,
      },
      { id: "b2", i: 1, j: -1, k: "-9007199254740993", si: "1", sk: "-9007199254740993", zero: true },
    ],
  },
  {
    name: "an INT64 past 2^53 compared with a FLOAT64 compares as FLOAT64s",
    sql: "select id, k = 9007199254740992.0 as eq, k > 9007199254740992.5 as gt, i = 9223372036854775807.0 as imax from `shape.int64` order by id",
    expect: [
      { id: "b1", eq: true, gt: false, imax: true },
      { id: "b2", eq: false, gt: false, imax: false },
    ],
    found: "ClickHouse: compared exactly (eq false, gt true, imax false)",
  },
  {
    name: "an INT64 past 2^53 in IN, BETWEEN and CASE WHEN with FLOAT64s compares as FLOAT64s",
    sql: "select id, k in (9007199254740992.0, 1.5) as inl, k in (9007199254740992.0, null) as innull, k between 9007199254740992.0 and 9007199254740992.0 as btw, case k when 9007199254740992.0 then 'y' else 'n' end as cs from `shape.int64` order by id",
    expect: [
      { id: "b1", inl: true, innull: true, btw: true, cs: "y" },
      { id: "b2", inl: false, innull: null, btw: false, cs: "n" },
    ],
    found:
      "ClickHouse: compared exactly (false and 'n' for b1) — the comparison operators' fix had left these out",
  },
  {
    name: "SUM, MIN, MAX and COUNT(DISTINCT) of INT64 past 2^53",
    sql: "select sum(k) as s, min(j) as mn, max(i) as mx, count(distinct k) as c from `shape.int64`",
    expect: [{ s: 0, mn: "-9223372036854775808", mx: "9223372036854775807", c: 2 }],
  },
  {
    name: "keys with dots, spaces, quotes, unicode, reserved words, digits, read quoted",
    sql: "select `a.b`, `sp ace`, `q'uote`, `d\"q`, `e\u0301`, `שלום`, `😀`, `select`, `from`, `order`, `group`, `0`, `1e3` from `shape.keys` where id = 'k1'",
    expect: [
      {
        "a.b": 1,
        "sp ace": 2,
        "q'uote": 3,
        'd"q': 4,
        "e\u0301": 7,
        שלום: 8,
        "😀": 9,
        select: 10,
        from: 11,
        order: 12,
        group: 13,
        "0": 14,
        "1e3": 15,
      },
    ],
  },
  {
    name: "odd keys inside a record, by subscript and through UNNEST",
    sql: "select t.id, metadata[0].`a.b` as x, m.`sp ace` as y, m.`select` as z, m.`😀` as e from `shape.keys` t left join unnest(t.metadata) m on true order by t.id",
    expect: [
      { id: "k1", x: "x", y: "y", z: "z", e: "e" },
      { id: "k2", x: null, y: null, z: null, e: null },
    ],
  },
  {
    name: "a dotted key and the record path it spells, both read through a CTE",
    sql:
      "with src as (select * from `shape.dotted`) " +
      "select m.`a.b` as flat, m.a[offset(0)].b as nested, src.`q.r` as qr, q.r as r " +
      "from src cross join unnest(src.metadata) as m cross join unnest(src.q) as q",
    expect: [{ flat: 1, nested: 2, qr: 3, r: 4 }],
    found: "every backend: both read the dotted key's value (one hidden CTE column for both paths)",
  },
  {
    name: "SELECT * through a CTE keeps a column whose key is the empty string",
    sql: "with src as (select * from `shape.empty.key`) select * from src",
    expect: [
      {
        id: "e1",
        timestamp: ts(AT),
        event_message: null,
        project: null,
        "": 1,
        a: 2,
        metadata: [{ "": "m" }],
      },
    ],
    found:
      "every backend: the CTE's SELECT * left the column out (names.filter(Boolean)), SELECT * of the source kept it",
  },
  {
    name: "non-ASCII keys that are one another's case, read directly",
    sql: "select `\u01c5` as a, `\u01c6` as b, `\u0130` as c, `i\u0307` as d, `Σ` as e, `σ` as f from `shape.fold`",
    expect: [{ a: 1, b: 2, c: 3, d: 4, e: 5, f: 6 }],
  },
  {
    name: "non-ASCII keys that are one another's case, read through a CTE",
    sql:
      "with src as (select * from `shape.fold`) " +
      "select `\u01c5` as a, `\u01c6` as b, `\u0130` as c, `i\u0307` as d, `Σ` as e, `σ` as f from src",
    expect: [{ a: 1, b: 2, c: 3, d: 4, e: 5, f: 6 }],
    found: "every backend: a CTE's columns were looked up by lower case only, so b, d and f read a, c and e",
  },
  {
    name: "a reserved-word column in arithmetic, ORDER BY and names differing by case",
    sql: "select t.`select` + 1 as s, Status, status from `shape.keys` t order by t.`select` desc",
    expect: [
      { s: 21, Status: "T", status: null },
      { s: 11, Status: "S", status: "s" },
    ],
  },
  {
    name: "a 300-character key, keys of a space and a tab, _PARTITIONTIME, and timestamp and id inside a record",
    sql: `select id, \`${LONG_KEY}\` as l, \` \` as sp, \`\t\` as tb, _PARTITIONTIME as p, metadata[0].timestamp as mt, metadata[0].id as mi, metadata[0].\`${LONG_KEY}\` as ml from \`shape.odd-keys\` order by id`,
    expect: [
      { id: "o1", l: 1, sp: "space", tb: "tab", p: "p", mt: "inner-ts", mi: "inner-id", ml: 2 },
      // metadata.timestamp widened to STRING by o2's number, in the same request
      { id: "o2", l: null, sp: null, tb: null, p: null, mt: "5", mi: null, ml: null },
    ],
  },
  {
    name: "string functions count code points: emoji, a combining mark, CJK",
    sql: "select id, length(s) as n, substr(s, 2, 2) as sub, strpos(s, 'B') as p, regexp_replace(s, r'.', '*') as stars, split(s, '') as parts, s < 'b' as lt from `shape.unicode` order by id",
    expect: [
      { id: "u0", n: 4, sub: "ab", p: 0, stars: "****", parts: ["😀", "a", "b", "c"], lt: false },
      { id: "u1", n: 3, sub: "\u0301x", p: 0, stars: "***", parts: ["e", "\u0301", "x"], lt: false },
      { id: "u2", n: 5, sub: "😀B", p: 3, stars: "*****", parts: ["A", "😀", "B", "😀", "C"], lt: true },
      { id: "u3", n: 3, sub: "本語", p: 0, stars: "***", parts: ["日", "本", "語"], lt: false },
      { id: "u4", n: 0, sub: "", p: 0, stars: "", parts: [""], lt: true },
    ],
  },
  {
    name: "CROSS JOIN UNNEST drops missing, null and empty arrays; LEFT JOIN keeps them",
    sql: "select id, a, r.x from `shape.values` left join unnest(metadata) m on true left join unnest(m.arr) a on true left join unnest(m.recs) r on true order by id, a, r.x",
    expect: [
      { id: "v1", a: 1, x: 1 },
      { id: "v1", a: 1, x: 2 },
      { id: "v1", a: 2, x: 1 },
      { id: "v1", a: 2, x: 2 },
      { id: "v1", a: 3, x: 1 },
      { id: "v1", a: 3, x: 2 },
      { id: "v2", a: null, x: null },
      { id: "v3", a: null, x: null },
      { id: "v4", a: null, x: null },
      { id: "v5", a: 4, x: 9 },
    ],
  },
  {
    name: "CROSS JOIN UNNEST of records, an object being a record of one",
    sql: "select id, r.x, r.y from `shape.values` cross join unnest(metadata) m cross join unnest(m.recs) r order by id, r.x",
    expect: [
      { id: "v1", x: 1, y: "a" },
      { id: "v1", x: 2, y: null },
      { id: "v5", x: 9, y: null },
    ],
  },
  {
    name: "ARRAY_LENGTH and subscripts five records deep",
    sql: "select id, array_length(metadata[safe_offset(0)].arr) as n, metadata[0].deep[0].r[0].q[0].z[0].w as w, metadata[safe_offset(1)].n as none from `shape.values` order by id",
    expect: [
      { id: "v1", n: 3, w: 1, none: null },
      { id: "v2", n: 0, w: null, none: null },
      { id: "v3", n: null, w: null, none: null },
      { id: "v4", n: null, w: null, none: null },
      { id: "v5", n: 1, w: null, none: null },
    ],
  },
  {
    name: "LIKE with %, _ and \\ in the data; REGEXP_CONTAINS across a newline; a 5,000-character value",
    sql: "select id, m.s like 'a\\\\%b\\\\_c%' as esc, m.s like '%\\\\\\\\%' as bs, regexp_contains(m.s, r'^line1$') as anchored, regexp_contains(m.s, r'line1\\nline2') as nl, length(m.s) as len from `shape.values` cross join unnest(metadata) m order by id",
    expect: [
      { id: "v1", esc: true, bs: true, anchored: false, nl: false, len: 7 },
      { id: "v2", esc: false, bs: false, anchored: false, nl: true, len: 11 },
      { id: "v3", esc: null, bs: null, anchored: null, nl: null, len: null },
      { id: "v5", esc: false, bs: false, anchored: false, nl: false, len: 5000 },
    ],
  },
  {
    name: "fields widened to STRING across requests: read, compared with numbers, booleans and text",
    sql: "select id, code, flag, m[0].code as mc, code = 200 as n200, code = '200' as s200, code > 300 as gt, flag = true as t from `shape.widened` order by id",
    expect: [
      { id: "w1", code: "200", flag: "true", mc: "404", n200: true, s200: true, gt: false, t: true },
      { id: "w2", code: "500", flag: "false", mc: "500", n200: false, s200: false, gt: true, t: false },
      { id: "w3", code: "abc", flag: "yes", mc: "x", n200: null, s200: false, gt: null, t: null },
      { id: "w4", code: "200", flag: "true", mc: "1.5", n200: true, s200: true, gt: false, t: true },
    ],
  },
  {
    name: "GROUP BY and COUNT(DISTINCT) over widened fields",
    sql: "select code, count(*) as n, count(distinct m[0].code) as mc from `shape.widened` group by code order by code",
    expect: [
      { code: "200", n: 2, mc: 2 },
      { code: "500", n: 1, mc: 1 },
      { code: "abc", n: 1, mc: 1 },
    ],
  },
  {
    name: "a record widened to STRING is its JSON text, read with JSON_VALUE",
    sql: "select id, m, json_value(m, '$.n.k[1]') as k, arr from `shape.record-to-text` order by id",
    expect: [
      { id: "a", m: '{"z":1,"a":"x y","n":{"k":[1,2]}}', k: "2", arr: ["1", "2"] },
      { id: "b", m: "plain", k: null, arr: ["s", "1.5"] },
    ],
  },
  {
    name: "arrays of strings with 16 digits or an exponent in them: UNNEST, ARRAY_TO_STRING",
    sql: "select id, x, o, array_to_string(words, ',') as w from `shape.digit-strings` cross join unnest(ids) x with offset o order by id, o",
    expect: [
      { id: "d1", x: "req 1736938800123456", o: 0, w: "up 1e5 times" },
      { id: "d1", x: "x", o: 1, w: "up 1e5 times" },
      { id: "d2", x: "1736938800123456", o: 0, w: "" },
      { id: "d3", x: "s", o: 0, w: "18446744073709552000" },
      { id: "d3", x: "18446744073709552000", o: 1, w: "18446744073709552000" },
      { id: "d3", x: "123456789012345680000", o: 2, w: "18446744073709552000" },
    ],
    found:
      "ClickHouse: 422 'Arrays passed to arrayMap must have equal size' (the numbers of an array with no number in it were an empty list)",
  },
  {
    name: "numbers of a STRING array inside a record read through UNNEST of the record as on the wire",
    sql: "select t.id, x, o from `shape.widened-array-in-record` t cross join unnest(t.m) mm cross join unnest(mm.xs) x with offset o union all select t.id, x, o + 10 from `shape.widened-array-in-record` t cross join unnest(t.rs) r cross join unnest(r.xs) x with offset o order by id, o",
    expect: [
      { id: "w1", x: "1e+21", o: 0 },
      { id: "w1", x: "0.5", o: 1 },
      { id: "w1", x: "1e-7", o: 2 },
      { id: "w1", x: "1e+21", o: 10 },
      { id: "w1", x: "2", o: 11 },
      { id: "w2", x: "s", o: 0 },
      { id: "w2", x: "s", o: 10 },
    ],
    found: "DuckDB: 1e21 (its text of the record's array, which the check for a number to respell missed)",
  },
  {
    name: "ARRAY_LENGTH and ARRAY_TO_STRING of arrays sent as null or left out, in records too",
    sql: "select t.id, array_length(mm.xs) as a, array_length(t.ys) as b, array_length(r.zs) as c, array_to_string(mm.xs, ',') as s, array_to_string(r.zs, ',') as z, array_length(r.os) as o, 'c' in unnest(r.zs) as has, r.zs[safe_offset(0)] as z0, (select count(*) from unnest(r.zs)) as n from `shape.null-arrays` t cross join unnest(t.m) mm cross join unnest(t.rs) r order by id",
    expect: [
      { id: "n1", a: null, b: null, c: 0, s: null, z: "", o: 1, has: false, z0: null, n: 0 },
      { id: "n2", a: 1, b: 1, c: 1, s: "a", z: "c", o: 2, has: true, z0: "c", n: 1 },
      { id: "n3", a: null, b: null, c: null, s: null, z: null, o: null, has: false, z0: null, n: 0 },
    ],
    found:
      "PostgreSQL: 422 'cannot get array length of a scalar' (and 'cannot extract elements from a scalar') for an array sent as null inside records",
  },
  {
    name: "an object read as STRING is its JSON text as ingest wrote it: escapes spelled as JSON.stringify spells them",
    sql: "select t.id, mm.n, r.x, el, o from `shape.escaped-text` t cross join unnest(t.m) mm cross join unnest(t.recs) r cross join unnest(t.mix) el with offset o order by t.id, o",
    expect: [
      { id: "e1", n: J({ s: ESCAPED }), x: J({ s: ESCAPED }), el: J({ s: ESCAPED }), o: 0 },
      { id: "e1", n: J({ s: ESCAPED }), x: J({ s: ESCAPED }), el: ESCAPED, o: 1 },
      { id: "e2", n: "plain", x: "plain", el: "plain", o: 0 },
    ],
    found:
      "DuckDB: \\u001B and \\u001F (its JSON writer's capitals); ClickHouse: those and U+2028/U+2029 escaped, for a record widened to STRING below a record, a record's field below an array and an element of a mixed array",
  },
  {
    name: "nested and mixed arrays are arrays of text; UNNEST WITH OFFSET of FLOAT64",
    sql: "select id, nest, mix, x, o from `shape.arrays` left join unnest(fl) x with offset o on true order by id, o",
    expect: [
      { id: "a", nest: ["[1,2]", "[3]"], mix: ["1", "a", "true", "1.5"], x: 1, o: 0 },
      { id: "a", nest: ["[1,2]", "[3]"], mix: ["1", "a", "true", "1.5"], x: 2.5, o: 1 },
      { id: "b", nest: [], mix: [], x: 3, o: 0 },
      // a missing array shows as [] (docs/clickhouse.md "NULL arrays")
      { id: "c", nest: [], mix: [], x: null, o: null },
    ],
  },
];

/** the record paths of shape.number-text, as dashboards write them */
const RESPONSE = "metadata[0].response[0]";
const CF = "metadata[0].request[0].cf[0]";
const M = "metadata[0]";

// The text of ingested numbers, booleans and times in string functions: every argument spelled as
// CAST(… AS STRING) spells it (docs/compiler.md: a FLOAT64 as core spells a number — shortest
// round trip, `1e+21`, `1e-7`, -0 as `0`, BigQuery's "a returned 0 will not be signed"), never as
// an engine's own cast does.
const NUMBER_TEXT_CASES: ShapeCase[] = [
  {
    name: "x IN UNNEST(array) AS name names the column",
    sql: "select id, '1e+21' in unnest(tags) as has, not 's' in unnest(tags) as other from `shape.widened-arrays` order by id",
    expect: [
      { id: "y1", has: true, other: true },
      { id: "y2", has: false, other: false },
    ],
    found:
      "every backend: the columns were f0_ and f1_ (node-sql-parser reads the alias as the UNNEST's own)",
  },
  {
    name: "FORMAT without a specifier beside ORDER BY",
    sql: "select id, format('%%') as p, format('abc') as a, format('') as e from `shape.number-text` order by id",
    expect: ["n1", "n2", "n3"].map((id) => ({ id, p: "%", a: "abc", e: "" })),
    found:
      "DuckDB: 422 'ORDER BY non-integer literal has no effect' (the constant was a bare literal among the keys completing the cut order)",
  },
  {
    name: "FLOAT64 fields of repeated records read exactly through UNNEST and subscripts",
    sql: "select r.f, cast(r.f as string) as s, recs[offset(1)].f as second from `shape.json-doubles` cross join unnest(recs) r order by r.f",
    expect: [
      { f: 0.30000000000000004, s: "0.30000000000000004", second: 1.2345678901234568e20 },
      { f: 111.33861541748047, s: "111.33861541748047", second: 1.2345678901234568e20 },
      { f: 1.2345678901234568e20, s: "123456789012345680000", second: 1.2345678901234568e20 },
    ],
    found:
      "ClickHouse: a neighbouring double for 111.33861541748047, 123456789012345670000 for 1.2345678901234568e20 (RapidJSON, allow_simdjson = 0, read one random double in eight as a neighbour)",
  },
  {
    name: "JSON_VALUE of doubles and of a 20-digit number beside them",
    sql: "select json_value(event_message, '$.a') as a, json_value(event_message, '$.f') as f, json_value(event_message, '$.g') as g, json_value(event_message, '$.h') as h from `shape.json-doubles`",
    expect: [{ a: "x", f: "111.33861541748047", g: "123456789012345680000", h: "18446744073709552000" }],
    found:
      "ClickHouse: a neighbouring double for 111.33861541748047, 123456789012345670000 for 1.2345678901234568e20",
  },
  {
    name: "numbers of an array widened to STRING read as on the wire: UNNEST, WHERE",
    sql: "select id, x, o from `shape.widened-arrays` left join unnest(tags) x with offset o on true where x is null or x like '%e%' or x = '42' order by id, o",
    expect: [
      { id: "y1", x: "1e+21", o: 0 },
      { id: "y1", x: "1e-7", o: 1 },
      { id: "y1", x: "42", o: 3 },
    ],
    found: "DuckDB and ClickHouse: 1e21 (their text of the JSON number)",
  },
  {
    name: "numbers of arrays and record fields widened to STRING: subscripts, ARRAY_TO_STRING, IN UNNEST, FORMAT",
    sql: "select id, tags[safe_offset(0)] as t0, array_to_string(tags, ',') as s, ('1e+21' in unnest(tags)) as has, format('%t', tags) as f, recs[safe_offset(0)].x as r0, nest from `shape.widened-arrays` order by id",
    expect: [
      {
        id: "y1",
        t0: "1e+21",
        s: "1e+21,1e-7,0.5,42",
        has: true,
        f: "[1e+21, 1e-7, 0.5, 42]",
        r0: "1e+21",
        nest: ['[1e+21,"1e21"]', '{"a":1.5e+300}'],
      },
      { id: "y2", t0: "s", s: "s", has: false, f: "[s]", r0: "s", nest: [] },
    ],
    found: "DuckDB and ClickHouse: 1e21 throughout (has false)",
  },
  {
    name: "JSON_VALUE of a JSON number is CAST AS STRING of the INT64 or FLOAT64 it is",
    sql: "select json_value(event_message, '$.duration') as d, json_value(event_message, '$.ratio') as r, json_value(event_message, '$.big') as b, json_value(event_message, '$.huge') as h, json_value(event_message, '$.one') as o, json_value(event_message, '$.exp') as e, json_value(event_message, '$.negzero') as z, json_value(event_message, '$.beyond') as y, json_value(event_message, '$.tiny') as t, json_extract_scalar(event_message, '$.arr[1]') as a1, json_value(event_message, '$.s') as s from `shape.json-numbers`",
    expect: [
      {
        d: "15000000",
        r: "0.30000000000000004",
        b: "9007199254740993",
        h: "1e+21",
        o: "1",
        e: "100",
        z: "0",
        y: "12345678901234567000",
        t: "1.5e-10",
        a1: "2.5",
        s: "1e21",
      },
    ],
    found:
      "each engine its own text: DuckDB 1e21, 1.0, 100.0, -0.0; ClickHouse 1e21, 1, 100, -0; PostgreSQL the text as written (1E+2, 12345678901234567890, 1.5E-10, 2.50)",
  },
  {
    name: "JSON_QUERY writes numbers as JSON_VALUE reads them",
    sql: "select json_query(event_message, '$.arr') as a, json_query(event_message, '$') as q from `shape.json-numbers`",
    expect: [
      {
        a: "[1e+21,2.5]",
        q: '{"duration":15000000,"ratio":0.30000000000000004,"big":9007199254740993,"huge":1e+21,"one":1,"exp":100,"negzero":0,"beyond":12345678901234567000,"tiny":1.5e-10,"arr":[1e+21,2.5],"s":"1e21"}',
      },
    ],
    found:
      "each engine its own text: DuckDB 1e21, 1.0, 100.0, -0.0; ClickHouse 1e21, 1, 100, -0; PostgreSQL the text as written",
  },
  {
    name: "JSON_VALUE of a record widened to STRING reads core's numbers back",
    sql: "select id, json_value(m[0].n, '$.a') as a, json_value(m[0].n, '$.b[1]') as b from `shape.widened-in-record` order by id",
    expect: [
      { id: "x1", a: "1e+21", b: "18446744073709552000" },
      { id: "x2", a: null, b: null },
    ],
    found: "DuckDB and ClickHouse: 1e21",
  },
  {
    name: "fields of a record widened beside a 20-digit number keep their values; a record's text keeps core's numbers",
    sql: "select id, m[0].i as i, m[0].n as n, m[0].r as r from `shape.widened-in-record` order by id",
    expect: [
      {
        id: "x1",
        i: "5",
        n: '{"a":1e+21,"b":[1.5e+300,18446744073709552000,2e-300],"c":"x:1e21 \\" 12345678901234567890123"}',
        r: [{ a: 1 }],
      },
      { id: "x2", i: "s", n: "s", r: [{ a: 2 }, { a: 3 }] },
    ],
    found:
      "ClickHouse: NULL for i and n, [] for r (the widening's mutation read the record's JSON with simdjson, which gives up on a document holding a literal beyond 64 bits); DuckDB and ClickHouse: 1e21 and 1.5e300 in n's text",
  },
  {
    name: "CONCAT and || of INT64, FLOAT64, BOOL and TIMESTAMP fields spell them as CAST AS STRING",
    sql: `select id, concat(${RESPONSE}.status_code, '|', ${CF}.latitude, '|', ${CF}.botManagement[0].verifiedBot) as a, ${M}.ratio || '' as b, concat(${M}.huge, ',', ${M}.tiny) as c, concat(${CF}.latitude, ${CF}.longitude) as d, concat('t=', timestamp) as t from \`shape.number-text\` order by id`,
    expect: [
      {
        id: "n1",
        a: "200|37.7749|false",
        b: "0.30000000000000004",
        c: "1e+21,1e-7",
        d: "37.7749-122.4194",
        t: "t=2025-01-15 10:00:00.000100+00",
      },
      {
        id: "n2",
        a: "404|0|true",
        b: "2.5",
        c: "123456789012345680000,1.5e-300",
        d: "00",
        t: "t=2025-01-15 10:00:00.120+00",
      },
      { id: "n3", a: null, b: null, c: null, d: null, t: "t=2025-01-15 10:00:00+00" },
    ],
    found:
      "DuckDB: its own text of a DOUBLE ('1e-07', '0.0') and of a TIMESTAMP ('2025-01-15 10:00:00.0001', no +00); ClickHouse: '1e21' and a TIMESTAMP without +00; PostgreSQL: 'operator does not exist: double precision || double precision' (422) for two FLOAT64s",
  },
  {
    name: "CONCAT of a BOOL expression and of FLOAT64 literals",
    sql: `select id, concat(${RESPONSE}.status_code >= 400, '') as bad, concat(1e21, '|', -0.0, '|', 1e-7, '|', 0.1 + 0.2) as lits from \`shape.number-text\` where id in ('n1', 'n2') order by id`,
    expect: [
      { id: "n1", bad: "false", lits: "1e+21|0|1e-7|0.30000000000000004" },
      { id: "n2", bad: "true", lits: "1e+21|0|1e-7|0.30000000000000004" },
    ],
    found: "ClickHouse: '0' and '1' for the BOOL, '1e21' and '1e-7'; DuckDB: '0.0' for -0.0 and '1e-07'",
  },
  {
    name: "CAST, CONCAT and FORMAT %T of a DATETIME with a fraction: six digits",
    sql: "select id, cast(datetime(timestamp) as string) as a, concat(datetime(timestamp), '') as b, format('%T', datetime(timestamp)) as c, safe_cast(datetime(timestamp) as string) as d from `shape.number-text` order by id",
    expect: [
      {
        id: "n1",
        a: "2025-01-15 10:00:00.000100",
        b: "2025-01-15 10:00:00.000100",
        c: 'DATETIME "2025-01-15 10:00:00.000100"',
        d: "2025-01-15 10:00:00.000100",
      },
      {
        id: "n2",
        a: "2025-01-15 10:00:00.120000",
        b: "2025-01-15 10:00:00.120000",
        c: 'DATETIME "2025-01-15 10:00:00.120000"',
        d: "2025-01-15 10:00:00.120000",
      },
      {
        id: "n3",
        a: "2025-01-15 10:00:00",
        b: "2025-01-15 10:00:00",
        c: 'DATETIME "2025-01-15 10:00:00"',
        d: "2025-01-15 10:00:00",
      },
    ],
    found:
      "DuckDB and PostgreSQL: their own text, trailing zeros dropped ('.0001', '.12'); ClickHouse: CONCAT wrote '.000000' for a whole second",
  },
  {
    name: "FORMAT pads negative numbers with zeros after the sign, and 0x with #",
    sql: `select id, format('%05d|%+06d|%08.2f|%#x|%-06d|', ${M}.delta, ${RESPONSE}.status_code, ${CF}.longitude, ${RESPONSE}.status_code, ${M}.delta) as f from \`shape.number-text\` order by id`,
    expect: [
      { id: "n1", f: "00003|+00200|-0122.42|0xc8|3     |" },
      { id: "n2", f: "-0005|+00404|00000.00|0x194|-5    |" },
      { id: "n3", f: "NULL|NULL|NULL|NULL|NULL|" },
    ],
    found:
      "PostgreSQL: '000-5', '0+200', '0-122.42' (zeros before the sign) and 'c8' without 0x; DuckDB: '3     ' as '000003' (the 0 flag beside -)",
  },
  {
    name: "FORMAT's + and space sign only %d, %i and the floats, not %x, %X and %o",
    sql: `select id, format('%+x|% x|%+o|%+X|%+d', ${RESPONSE}.status_code, ${RESPONSE}.status_code, ${RESPONSE}.status_code, ${RESPONSE}.status_code, ${RESPONSE}.status_code) as f from \`shape.number-text\` order by id`,
    expect: [
      { id: "n1", f: "c8|c8|310|C8|+200" },
      { id: "n2", f: "194|194|624|194|+404" },
      { id: "n3", f: "NULL|NULL|NULL|NULL|NULL" },
    ],
    found: "DuckDB and ClickHouse: +c8, ' c8', +310 (their printf signs unsigned conversions)",
  },
  {
    name: "ARRAY_TO_STRING of ingested FLOAT64 and BOOL arrays and of arrays built from fields",
    sql: `select id, array_to_string(${M}.samples, ',') as s, array_to_string(${M}.flags, ',') as f, array_to_string([${M}.ratio, ${M}.tiny, ${CF}.latitude], ';') as n, array_to_string([${CF}.botManagement[0].verifiedBot], ';') as b from \`shape.number-text\` order by id`,
    expect: [
      { id: "n1", s: "1.5,0,1e+21,1e-7", f: "true,false", n: "0.30000000000000004;1e-7;37.7749", b: "false" },
      { id: "n2", s: "", f: "", n: "2.5;1.5e-300;0", b: "true" },
      { id: "n3", s: null, f: null, n: "", b: "" },
    ],
    found:
      "DuckDB: '1e21' from JSON, '1e-07' and '0.0' from a list; ClickHouse: '1e21'; PostgreSQL: 't' for a boolean, '1e-07'",
  },
];

const CASES = [...TRUNCATION_CASES, ...VALUE_CASES, ...NUMBER_TEXT_CASES];

/** Queries BigQuery refuses, refused alike (422 sql_invalid) on every backend: message → SQL. */
const REFUSALS: Array<{ sql: string; message: RegExp; found: string }> = [
  {
    sql: `select string_agg(${CF}.latitude, ',') as s from \`shape.number-text\``,
    message: /No matching signature for function STRING_AGG: argument 1 is FLOAT64/,
    found:
      "DuckDB and ClickHouse joined their own text of the FLOAT64s; PostgreSQL: 'function string_agg(double precision, unknown) does not exist'",
  },
  {
    sql: `select string_agg(${CF}.botManagement[0].verifiedBot order by id) as s from \`shape.number-text\``,
    message: /No matching signature for function STRING_AGG: argument 1 is BOOL/,
    found: "DuckDB and ClickHouse joined true/false; PostgreSQL refused",
  },
];

describe.each(BACKENDS)("queries over hostile ingested shapes on $name", (fixture) => {
  let backend: Backend;
  useBackend(fixture, async (b) => {
    backend = b;
    for (const [source, requests] of Object.entries(SOURCES)) {
      for (const events of requests) await b.ingest([ingestBatch(source, events)]);
    }
  });

  it.each(CASES.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    expect(await runSql(backend, c.sql), c.found ?? c.sql).toEqual(c.expect);
  });

  it.each(REFUSALS.map((r) => [r.sql, r] as const))("refuses %s", async (_sql, r) => {
    await expect(runSql(backend, r.sql), r.found).rejects.toMatchObject({
      code: "sql_invalid",
      message: expect.stringMatching(r.message),
    });
  });
});
