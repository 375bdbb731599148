import { QesError } from "../errors.ts";
import { MAX_EVENT_DEPTH, nestsAtLeast, TOO_DEEP } from "./event-depth.ts";
import { contentEventId, type RequestEventIds } from "./event-id.ts";
import {
  type EventJson,
  eventJson,
  holdsHugeNumber,
  isJsonObject,
  type JsonObject,
  type JsonValue,
  MergedKeysError,
  parseEventJsonText,
  textOfJsonValue,
} from "./json-value.ts";
import { END_TIMESTAMP_MICROS, MIN_TIMESTAMP_MICROS, parseIsoTimestampMicros } from "./timestamp-micros.ts";

/**
 * One log event after normalisation (DESIGN.md §3): an `id` (given, or derived from the event's
 * content by `contentEventId`), a
 * `timestamp` in exact unix microseconds (given or the load time), and the event object itself
 * (`body`, which still holds every key as sent, including `id` and `timestamp`).
 */
export interface LogEvent {
  id: string;
  timestamp: bigint;
  body: JsonObject;
}

function describe(value: JsonValue): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? value.slice(0, 60) + "…" : value);
  return `${typeof value} ${String(value)}`;
}

/**
 * Unix time given as a number, in the unit its size shows. Shippers send seconds (Fluent Bit's
 * `json_date_format epoch`/`double`, Python's `time.time()`), milliseconds (JavaScript's
 * `Date.now()`), microseconds (this API's own form) or nanoseconds (Go, OpenTelemetry); read as
 * microseconds, seconds and milliseconds land in January 1970 — stored without a word and then
 * removed by the next retention run. Where a unit gives a time between 2001 and 5138 it is that
 * unit; every other integer is microseconds, as documented. A fraction is allowed for seconds and
 * milliseconds only.
 */
function unixTimeMicros(integer: bigint, fraction: string): bigint | null {
  if (integer >= 1_000_000_000n && integer < 100_000_000_000n) {
    return integer * 1_000_000n + BigInt((fraction + "000000").slice(0, 6));
  }
  if (integer >= 1_000_000_000_000n && integer < 100_000_000_000_000n) {
    return integer * 1_000n + BigInt((fraction + "000").slice(0, 3));
  }
  if (fraction !== "") return null;
  if (integer >= 100_000_000_000_000_000n) return integer / 1_000n;
  return integer;
}

const DECIMAL = /^(-?\d+)(?:\.(\d+))?$/;

function eventTimestamp(
  value: JsonValue | undefined,
  where: string,
  nowMicros: bigint,
  line: number | undefined,
): bigint {
  if (value === undefined || value === null) return nowMicros;
  if (typeof value === "bigint") return unixTimeMicros(value, "") as bigint;
  // the shortest text that reads back as the same double: the digits the sender wrote
  const decimal =
    typeof value === "number" && Number.isFinite(value)
      ? DECIMAL.exec(String(value))
      : typeof value === "string"
        ? DECIMAL.exec(value)
        : null;
  if (decimal) {
    const micros = unixTimeMicros(BigInt(decimal[1]!), decimal[2] ?? "");
    if (micros !== null) return micros;
  }
  if (typeof value === "string") {
    const micros = parseIsoTimestampMicros(value);
    if (micros !== null) return micros;
  }
  throw new QesError(
    "invalid_event",
    `${where}: "timestamp" is ${describe(value)}; expected an ISO 8601 timestamp ` +
      `(e.g. "2025-01-15T09:00:00.123456Z"; no zone means UTC) or a unix time in seconds, ` +
      `milliseconds, microseconds or nanoseconds (told apart by size; 16 digits are microseconds)`,
    line === undefined ? {} : { line },
  );
}

/**
 * The time of an event: its `timestamp`, or else the `@timestamp` that Logstash, Filebeat and
 * Fluentd's logstash format write (ISO 8601) — read by the same rules, but one it cannot read
 * leaves the arrival time, since the field is not this API's own. The field stays in the body.
 */
function timeOfEvent(value: JsonObject, where: string, nowMicros: bigint, line: number | undefined): bigint {
  const elastic = value["@timestamp"];
  if (
    (value.timestamp === undefined || value.timestamp === null) &&
    elastic !== undefined &&
    elastic !== null
  ) {
    try {
      return eventTimestamp(elastic, where, nowMicros, line);
    } catch {
      return nowMicros;
    }
  }
  return eventTimestamp(value.timestamp, where, nowMicros, line);
}

/**
 * `timeOfEvent`, refused outside the years 0001–9999 (BigQuery's TIMESTAMP range), in a load as
 * in ingest: a load stored what each engine made of it — DuckDB the year 0000 or -1200,
 * ClickHouse a time in 2025 or 2026 (its DateTime64 wraps), PostgreSQL refused it.
 */
function storableTime(value: JsonObject, where: string, nowMicros: bigint, line: number | undefined): bigint {
  const timestamp = timeOfEvent(value, where, nowMicros, line);
  if (timestamp < MIN_TIMESTAMP_MICROS || timestamp >= END_TIMESTAMP_MICROS) {
    throw new QesError(
      "invalid_event",
      `${where}: "timestamp" is outside the years 0001–9999 that every backend can store`,
      line === undefined ? {} : { line },
    );
  }
  return timestamp;
}

/**
 * UTF-8 bytes an `id` or a `project` may take: both are index keys on every backend, and
 * PostgreSQL's btree refuses an entry above 2,704 bytes (a longer key failed the whole commit, on
 * one backend only). Real ids are UUIDs and project refs are 20 characters.
 */
export const MAX_KEY_BYTES = 1024;

function keyTooLong(name: string, text: string, where: string, line: number | undefined): QesError | null {
  // a UTF-8 byte takes at least a third of a UTF-16 unit: short text needs no count
  if (text.length * 3 <= MAX_KEY_BYTES || Buffer.byteLength(text, "utf8") <= MAX_KEY_BYTES) return null;
  return new QesError(
    "invalid_event",
    `${where}: "${name}" is longer than ${MAX_KEY_BYTES} bytes; it is an index key: send a shorter one`,
    line === undefined ? {} : { line },
  );
}

/**
 * The `id` an event was sent with: a string or a number, as text. Undefined when there is none —
 * absent, null or empty: an empty id sent by every event of a shipper would otherwise make them
 * all one event, each later one deduplicated away behind a 200.
 */
function sentId(value: JsonValue | undefined, where: string, line: number | undefined): string | undefined {
  if (value === undefined || value === null) return undefined;
  let id: string;
  if (typeof value === "string") id = value;
  else if (typeof value === "bigint") id = String(value);
  else if (typeof value === "number") {
    // an integer read as FLOAT64 (past INT64, or written with a fraction past 2^53) lost its last
    // digits: 18446744073709551614 and …615 would both be 18446744073709552000, one event
    if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
      throw new QesError(
        "invalid_event",
        `${where}: "id" is ${describe(value)}, a number past INT64 that loses its last digits; send it as a string`,
        line === undefined ? {} : { line },
      );
    }
    id = String(value);
  } else {
    throw new QesError(
      "invalid_event",
      `${where}: "id" is ${describe(value)}; expected a string or a number (or no id: one is derived)`,
      line === undefined ? {} : { line },
    );
  }
  if (id.trim() === "") return undefined;
  const long = keyTooLong("id", id, where, line);
  if (long) throw long;
  return id;
}

function checkProject(value: JsonValue | undefined, where: string, line: number | undefined): void {
  if (value === undefined || value === null) return;
  const long = keyTooLong("project", textOfJsonValue(value) as string, where, line);
  if (long) throw long;
}

/**
 * The refusal of an event holding a number beyond FLOAT64's range: JSON.parse reads it as
 * Infinity, which each engine stored and answered its own way (DuckDB and PostgreSQL "Infinity",
 * ClickHouse NULL). No engine's FLOAT64 holds it as the number sent.
 */
export function hugeNumber(where: string, line?: number): QesError {
  return new QesError(
    "invalid_event",
    `${where}: a number is beyond the range of FLOAT64 (±1.7976931348623157e308); send it as a string`,
    line === undefined ? {} : { line },
  );
}

/**
 * A `message` string stands for `event_message` when the event has none, and is moved there (the
 * reference platform's ingest does the same): Vector's events, syslog, Docker and journald
 * sources carry their text as `message`, and shippers post them unchanged. An event that has
 * both keeps both as sent; a `message` that is not a string (a structured payload) stays a field.
 */
function moveMessage(value: JsonObject): void {
  if (typeof value.message !== "string") return;
  if (value.event_message !== undefined && value.event_message !== null) return;
  value.event_message = value.message;
  delete value.message;
}

/**
 * Parses one NDJSON line into a normalised event. Blank lines give null (NDJSON allows them).
 * Integers beyond ±2^53 survive exactly (as `bigint`). Throws QesError('invalid_event', …,
 * {line}) for malformed JSON, a line that is not a JSON object, one nested deeper than
 * MAX_EVENT_DEPTH, or an unusable `timestamp` (or one outside the years 0001–9999).
 *
 * An event without `id` gets `contentEventId(source, …)`, as the ingest route gives it
 * (`logEventFromJson`): a file loaded twice, or loaded and then posted, carries the same ids, so
 * the store keeps each event once.
 *
 * @param line the text of the line, without its newline
 * @param lineNumber 1-based, for the error message
 * @param nowMicros the load time, used for events without a timestamp
 * @param source the source loaded into (part of a derived id)
 */
export function parseEvent(
  line: string,
  lineNumber: number,
  nowMicros: bigint,
  source: string,
): LogEvent | null {
  if (line.trim() === "") return null;
  let parsed: EventJson;
  try {
    parsed = parseLine(line, lineNumber);
  } catch (e) {
    if (e instanceof QesError) throw e;
    if (e instanceof RangeError) {
      // the exact-integer parser (recursive) met depth that JSON.parse's value hid in a duplicate
      // key's earlier value (`{"a":[[[…]]],"a":9007199254740993}`: JSON.parse keeps the last)
      throw new QesError("invalid_event", `line ${lineNumber}: ${TOO_DEEP} (in a key sent twice)`, {
        line: lineNumber,
      });
    }
    if (e instanceof MergedKeysError) {
      throw new QesError("invalid_event", `line ${lineNumber}: ${e.message}`, { line: lineNumber, cause: e });
    }
    const reason = e instanceof Error ? e.message : String(e);
    throw new QesError("invalid_event", `line ${lineNumber}: not valid JSON (${reason})`, {
      line: lineNumber,
      cause: e,
    });
  }
  const value = parsed.value;
  if (!isJsonObject(value)) {
    throw new QesError(
      "invalid_event",
      `line ${lineNumber}: an event must be a JSON object, got ${describe(value)}`,
      {
        line: lineNumber,
      },
    );
  }
  const where = `line ${lineNumber}`;
  if (parsed.huge) throw hugeNumber(where, lineNumber);
  const id = sentId(value.id, where, lineNumber);
  checkProject(value.project, where, lineNumber);
  const timestamp = storableTime(value, where, nowMicros, lineNumber);
  // the id first: derived from the event as sent, as it was before `message` moved
  const eventId = id ?? contentEventId(source, value);
  moveMessage(value);
  return { id: eventId, timestamp, body: value };
}

/**
 * A line's JSON value, exact and storable (`parseEventJsonText`), refused when an event nests
 * deeper than MAX_EVENT_DEPTH, as the ingest route refuses it: JSON.parse first (not recursive),
 * then the depth, before anything recursive (the exact-integer parser, the schema's widening)
 * sees the value. Text JSON.parse refuses goes to `parseEventJsonText`, for its error.
 */
function parseLine(line: string, lineNumber: number): EventJson {
  let parsed: JsonValue;
  try {
    parsed = JSON.parse(line) as JsonValue;
  } catch {
    const value = parseEventJsonText(line);
    return { value, huge: holdsHugeNumber(value) };
  }
  if (isJsonObject(parsed) && nestsAtLeast(parsed, MAX_EVENT_DEPTH)) {
    throw new QesError("invalid_event", `line ${lineNumber}: ${TOO_DEEP}`, { line: lineNumber });
  }
  return eventJson(parsed, line);
}

/**
 * One parsed JSON value (an event of an ingest request) as a normalised event of `source`
 * (DESIGN.md §10). An event without `id` gets `contentEventId(source, value)`: derived from what
 * was sent, so a retried request carries the same ids and stores nothing twice. `timestamp`
 * defaults to `nowMicros` (after the id is derived, so it plays no part in it). Throws
 * QesError('invalid_event', `<where>: <reason>`) for a value that is not an object, whose `id` is
 * not a string or number, whose `id` or `project` is longer than MAX_KEY_BYTES, or whose
 * `timestamp` is unusable.
 *
 * @param where how the message names the event, e.g. `event 3`
 * @param line the event's line in its body (NDJSON), carried by the refusal
 * @param ids the ids derived for the request's earlier events: a repeat of one's content gets an
 *   id of its own (`RequestEventIds`); without it every repeat gets the first's id
 */
export function logEventFromJson(
  value: JsonValue,
  source: string,
  nowMicros: bigint,
  where = "event",
  line?: number,
  ids?: RequestEventIds,
): LogEvent {
  const at = line === undefined ? {} : { line };
  if (!isJsonObject(value)) {
    throw new QesError(
      "invalid_event",
      `${where}: an event must be a JSON object, got ${describe(value)}`,
      at,
    );
  }
  const id = sentId(value.id, where, line);
  checkProject(value.project, where, line);
  const timestamp = storableTime(value, where, nowMicros, line);
  // the id first: derived from the event as sent, as it was before `message` moved
  const eventId = id ?? ids?.derive(source, value) ?? contentEventId(source, value);
  moveMessage(value);
  return { id: eventId, timestamp, body: value };
}

/** The current time in unix microseconds (millisecond resolution). */
export function nowMicros(): bigint {
  return BigInt(Date.now()) * 1000n;
}
