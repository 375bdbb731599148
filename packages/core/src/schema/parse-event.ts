import { randomUUID } from "node:crypto";
import { QesError } from "../errors.ts";
import {
  isJsonObject,
  type JsonObject,
  type JsonValue,
  parseJsonText,
  textOfJsonValue,
} from "./json-value.ts";
import { parseIsoTimestampMicros } from "./timestamp-micros.ts";

/**
 * One log event after normalisation (DESIGN.md §3): a UUID `id` (given or generated), a
 * `timestamp` in exact unix microseconds (given or the load time), and the event object itself
 * (`body`, which still holds every key as sent, including `id` and `timestamp`).
 */
export interface LogEvent {
  id: string;
  timestamp: bigint;
  body: JsonObject;
}

const DIGITS = /^-?\d+$/;

function describe(value: JsonValue): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? value.slice(0, 60) + "…" : value);
  return `${typeof value} ${String(value)}`;
}

function eventTimestamp(value: JsonValue | undefined, line: number, nowMicros: bigint): bigint {
  if (value === undefined || value === null) return nowMicros;
  if (typeof value === "bigint") return value;
  if (typeof value === "number" && Number.isSafeInteger(value)) return BigInt(value);
  if (typeof value === "string") {
    if (DIGITS.test(value)) return BigInt(value);
    const micros = parseIsoTimestampMicros(value);
    if (micros !== null) return micros;
  }
  throw new QesError(
    "invalid_event",
    `line ${line}: "timestamp" is ${describe(value)}; expected an ISO 8601 timestamp ` +
      `(e.g. "2025-01-15T09:00:00.123456Z"; no zone means UTC) or integer unix microseconds`,
    { line },
  );
}

/**
 * Parses one NDJSON line into a normalised event. Blank lines give null (NDJSON allows them).
 * Integers beyond ±2^53 survive exactly (as `bigint`). Throws QesError('invalid_event', …,
 * {line}) for malformed JSON, a line that is not a JSON object, or an unusable `timestamp`.
 *
 * @param line the text of the line, without its newline
 * @param lineNumber 1-based, for the error message
 * @param nowMicros the load time, used for events without a timestamp
 */
export function parseEvent(line: string, lineNumber: number, nowMicros: bigint): LogEvent | null {
  if (line.trim() === "") return null;
  let value: JsonValue;
  try {
    value = parseJsonText(line);
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    throw new QesError("invalid_event", `line ${lineNumber}: not valid JSON (${reason})`, {
      line: lineNumber,
      cause: e,
    });
  }
  if (!isJsonObject(value)) {
    throw new QesError(
      "invalid_event",
      `line ${lineNumber}: an event must be a JSON object, got ${describe(value)}`,
      {
        line: lineNumber,
      },
    );
  }
  const id = value.id;
  return {
    id: id === undefined || id === null ? randomUUID() : (textOfJsonValue(id) as string),
    timestamp: eventTimestamp(value.timestamp, lineNumber, nowMicros),
    body: value,
  };
}

/** The current time in unix microseconds (millisecond resolution). */
export function nowMicros(): bigint {
  return BigInt(Date.now()) * 1000n;
}
