import {
  type EventJson,
  eventJson,
  eventJsonValue,
  holdsHugeNumber,
  hugeNumber,
  isJsonObject,
  type JsonValue,
  MAX_EVENT_DEPTH,
  MergedKeysError,
  nestsAtLeast,
  QesError,
  TOO_DEEP,
} from "@qes/core";
import { eventRefusal } from "./event-refusal.ts";
import { tooManyEvents } from "./group-commit-queue.ts";
import { bracketedEnd, isJsonWhitespace, NEWLINE, OPEN_BRACE, OPEN_BRACKET } from "./json-text-scan.ts";
import { malformedArrayEvent } from "./malformed-array-event.ts";

const BYTE_ORDER_MARK = 0xfeff;

/** how the body holds its events, from `Content-Type` */
export type BodyFormat = "json" | "ndjson";

const NDJSON_TYPES = new Set([
  "application/x-ndjson",
  "application/ndjson",
  "application/jsonl",
  "application/x-jsonlines",
  "application/jsonlines",
]);

/** the body types read, as a 415's `allowed` lists them */
const READ_TYPES = ["application/json", "application/x-ndjson"] as const;

/**
 * The body format named by `Content-Type`: NDJSON for `application/x-ndjson` (and its aliases),
 * JSON for `application/json`, any `+json` type, or no type at all (curl without `-H`). Anything
 * else is 415 `unsupported_media_type` naming the header, so a form post or XML is not half-read as
 * JSON; the shippers' settings that send such bodies (Vector's `codec: text` or `raw_message`,
 * Fluent Bit's `format msgpack`, Logstash's `format => message` or `form`) are named with the
 * ones to use instead.
 */
export function bodyFormat(contentType: string | undefined): BodyFormat {
  const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (type === "" || type === "application/json" || type === "text/json" || type.endsWith("+json"))
    return "json";
  if (NDJSON_TYPES.has(type)) return "ndjson";
  throw new QesError(
    "unsupported_media_type",
    `Content-Type "${type.slice(0, 60)}" is not accepted: send events as JSON objects, with application/json ` +
      `(an array of events, one event, or {"batch": [...]}) or application/x-ndjson (one event per line). ` +
      "Vector: encoding.codec json; Fluent Bit: format json or json_lines; Logstash: format json_batch.",
    { param: "Content-Type", allowed: READ_TYPES },
  );
}

/**
 * The raw events of a body (DESIGN.md §10): a JSON array, one JSON object, `{"batch": [...]}`, or
 * NDJSON lines (blank lines skipped); a JSON body that holds several JSON texts one after another
 * (NDJSON or objects back to back, as shippers send under `application/json`) is one event per text. Each is checked to be an object no deeper than
 * `MAX_EVENT_DEPTH`; the first that is not refuses the request with 400 `invalid_event` naming its
 * 0-based index (and, for NDJSON, its line). Integers beyond 2^53 keep their exact value.
 */
export function parseIngestBody(body: Buffer, format: BodyFormat): JsonValue[] {
  return parseIngestEvents(body, format).events;
}

/** The events of a body and, when it gave them one per line or text, each one's line (1-based). */
export interface IngestEvents {
  events: JsonValue[];
  lines?: number[];
}

/**
 * `parseIngestBody` with the events' lines, so that a later refusal of an event names its line too.
 * A body of more than `maxEvents` events is refused with 413 as soon as they are counted, before
 * any event is checked or shaped: ten megabytes of `{}` are 3.5 million events, and shaping them
 * all only to refuse them took the server 40 s and 2 GB.
 */
export function parseIngestEvents(
  body: Uint8Array,
  format: BodyFormat,
  maxEvents = Number.POSITIVE_INFINITY,
): IngestEvents {
  const text = decodeUtf8(body);
  return format === "ndjson" ? parseNdjson(text, maxEvents) : parseJsonBody(text, maxEvents);
}

function decodeUtf8(body: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(body);
  } catch {
    // gzip's magic bytes are never UTF-8: a shipper (or curl --data-binary @file.gz) that
    // compressed the body but left out the header was told only "not valid UTF-8"
    if (body[0] === 0x1f && body[1] === 0x8b) {
      throw new QesError(
        "invalid_parameter",
        "The body is gzip data but the request has no Content-Encoding: gzip; send that header with it.",
        { param: "Content-Encoding" },
      );
    }
    throw new QesError("invalid_event", "The body is not valid UTF-8 text.");
  }
}

/** a body of nothing but white space, in either form: a client's mistake (an unread file, a drained
 * buffer), not a batch of none — that is `[]`, which is accepted */
function emptyBody(): QesError {
  return new QesError("invalid_event", "The body is empty: it holds no events.");
}

function parseJsonBody(text: string, maxEvents: number): IngestEvents {
  if (text.trim() === "") throw emptyBody();
  let parsed: EventJson;
  try {
    parsed = parseExact(text, (parsed) => {
      const events = eventsOfBody(parsed);
      if (events.length > maxEvents) throw tooManyEvents(maxEvents, events.length);
      for (const [index, event] of events.entries()) checkEvent(event, index, undefined);
    });
  } catch (e) {
    if (e instanceof QesError) throw e;
    // Several JSON texts one after another: NDJSON sent as application/json (Fluent Bit's
    // `json_lines` in the versions that label it so; Vector's newline framing under a hand-set
    // header) or Fluent Bit's `json_stream` (objects with nothing between them), always labelled
    // application/json. Each text is one event.
    // read lazily: a body of millions of tiny texts is refused at its first bad one, and none
    // is held apart from its event
    const texts = jsonTexts(text);
    const first = texts.next();
    const second = texts.next();
    if (!first.done && !second.done) return parseJsonTexts([first.value, second.value], texts, maxEvents);
    const bad = malformedArrayEvent(text, reason);
    if (bad) throw bad;
    throw new QesError(
      "invalid_event",
      `The body is not valid JSON (${reason(e)}). Send a JSON array of events, one event, ` +
        `{"batch": [...]}, or NDJSON with Content-Type: application/x-ndjson.`,
    );
  }
  const events = eventsOfBody(parsed.value);
  if (parsed.huge) {
    for (const [index, event] of events.entries()) checkHugeNumbers(event, `event ${index}`);
  }
  return { events };
}

function parseNdjson(text: string, maxEvents: number): IngestEvents {
  const events: JsonValue[] = [];
  const lines: number[] = [];
  let line = 0;
  for (const split of text.split("\n")) {
    line++;
    // a byte order mark starting a line: files saved with one, concatenated (`cat a b | curl`); the
    // body's first one is gone already, and a JSON body of several texts skips them too
    const raw = split.charCodeAt(0) === BYTE_ORDER_MARK ? split.slice(1) : split;
    if (raw.trim() === "") continue;
    if (events.length === maxEvents) throw tooManyEvents(maxEvents);
    let parsed: EventJson;
    try {
      parsed = parseExact(
        raw,
        (parsed) => checkEvent(parsed, events.length, line),
        `event ${events.length} (line ${line})`,
      );
    } catch (e) {
      if (e instanceof QesError) throw e;
      throw new QesError(
        "invalid_event",
        `event ${events.length} (line ${line}): ${
          holdsSeveralTexts(raw)
            ? "the line holds more than one JSON text; NDJSON is one event per line, each ending in a " +
              "newline (curl -d removes a file's newlines: send it with --data-binary)"
            : `not valid JSON (${reason(e)})`
        }`,
        {
          line,
        },
      );
    }
    if (parsed.huge) throw hugeNumber(`event ${events.length} (line ${line})`, line);
    events.push(parsed.value);
    lines.push(line);
  }
  if (events.length === 0) throw emptyBody();
  return { events, lines };
}

/**
 * An NDJSON line that begins with two JSON texts: several events on one line, as `curl -d
 * @file` sends a file (it drops the newlines) or as a body of CR line ends reads. JSON.parse's
 * "non-whitespace character after JSON" does not say so.
 */
function holdsSeveralTexts(line: string): boolean {
  const texts = jsonTexts(line);
  const first = texts.next();
  const second = texts.next();
  if (first.done || second.done) return false;
  try {
    JSON.parse(first.value.text);
    JSON.parse(second.value.text);
    return true;
  } catch {
    return false;
  }
}

/** one JSON text of a body that holds several, and the line it starts on (1-based) */
interface JsonText {
  text: string;
  line: number;
}

/**
 * The top-level JSON texts of a body, one at a time, without parsing them: an object or array ends at
 * its matching bracket (brackets inside strings skipped), anything else at the next whitespace
 * or bracket. A text left open at the end of the body is the last one; JSON.parse then says why
 * it is not valid. Linear, and not recursive: the depth of a hostile body does not matter here.
 */
function* jsonTexts(body: string): Generator<JsonText, void, undefined> {
  let line = 1;
  let i = 0;
  const n = body.length;
  while (i < n) {
    const c = body.charCodeAt(i);
    if (isJsonWhitespace(c) || c === BYTE_ORDER_MARK) {
      if (c === NEWLINE) line++;
      i++;
      continue;
    }
    const start = i;
    const startLine = line;
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      i = bracketedEnd(body, start);
      for (let j = start; j < i; j++) if (body.charCodeAt(j) === NEWLINE) line++;
    } else {
      while (i < n) {
        const d = body.charCodeAt(i);
        if (isJsonWhitespace(d) || d === OPEN_BRACE || d === OPEN_BRACKET) break;
        i++;
      }
    }
    yield { text: body.slice(start, i), line: startLine };
  }
}

function parseJsonTexts(
  head: readonly JsonText[],
  rest: Iterable<JsonText>,
  maxEvents: number,
): IngestEvents {
  const events: JsonValue[] = [];
  const lines: number[] = [];
  const each = function* () {
    yield* head;
    yield* rest;
  };
  for (const { text, line } of each()) {
    if (events.length === maxEvents) throw tooManyEvents(maxEvents);
    const where = `event ${events.length} (line ${line})`;
    let parsed: EventJson;
    try {
      parsed = parseExact(text, (value) => checkTextEvent(value, events.length, line), where);
    } catch (e) {
      if (e instanceof QesError) throw e;
      throw new QesError("invalid_event", `${where}: not valid JSON (${reason(e)})`, { line });
    }
    if (parsed.huge) throw hugeNumber(where, line);
    events.push(parsed.value);
    lines.push(line);
  }
  if (events.length === 0) throw emptyBody();
  return { events, lines };
}

/**
 * `JSON.parse` first: V8's parser is not recursive, so a hostile depth cannot overflow the stack
 * there, and the depth is then checked before anything recursive (the exact-integer parser, the
 * schema code) sees the value. Only text whose value holds an integer beyond 2^53 is parsed
 * again, exactly (a body of edge events nearly always holds a 16-digit run, a microsecond
 * timestamp, and almost never such an integer).
 */
function parseExact(text: string, checkEvents: (value: JsonValue) => void, where?: string): EventJson {
  const value = JSON.parse(text) as JsonValue;
  checkEvents(value);
  try {
    return eventJson(value, text);
  } catch (e) {
    // the exact-integer parser reads the text, which may hide depth from the check above in a
    // duplicate key's earlier value (`{"a":[[[…]]],"a":9007199254740993}`: JSON.parse keeps the
    // last); it is recursive, and its stack overflow was reported as "not valid JSON"
    if (e instanceof RangeError) {
      throw new QesError("invalid_event", `${where ?? "the body"}: ${TOO_DEEP} (in a key sent twice)`);
    }
    if (!(e instanceof MergedKeysError)) throw e;
    throw new QesError("invalid_event", `${where ?? eventOfMergedKeys(value)}: ${e.message}`);
  }
}

/** the events of a JSON body: an array of them, `{"batch": [...]}`, or one event */
function eventsOfBody(body: JsonValue): JsonValue[] {
  if (Array.isArray(body)) return body;
  return isJsonObject(body) && Array.isArray(body.batch) && Object.keys(body).length === 1
    ? body.batch
    : [body];
}

/** which event of a whole body holds the merged keys */
function eventOfMergedKeys(body: JsonValue): string {
  for (const [index, event] of eventsOfBody(body).entries()) {
    try {
      eventJsonValue(event, JSON.stringify(event));
    } catch (e) {
      if (e instanceof MergedKeysError) return `event ${index}`;
      throw e;
    }
  }
  return "the body";
}

/**
 * An event must be an object no deeper than MAX_EVENT_DEPTH. Checked on JSON.parse's value, before
 * the exact-integer parser (recursive) sees the text, and once per event: a body's own array (or
 * `{"batch": …}`) is not walked on its own first.
 */
function checkEvent(event: JsonValue, index: number, line: number | undefined): void {
  if (!isJsonObject(event)) {
    throw eventRefusal(index, line, `an event must be a JSON object, got ${describe(event)}`);
  }
  if (nestsAtLeast(event, MAX_EVENT_DEPTH)) {
    throw eventRefusal(index, line, TOO_DEEP);
  }
}

/**
 * `checkEvent` of one JSON text among several: an array there is most often a body's array of
 * events followed by more text (`[…] garbage`, `[…]\n[…]`), which "event 0: an event must be a
 * JSON object, got an array" blamed on an event the sender knew to be an object.
 */
function checkTextEvent(event: JsonValue, index: number, line: number): void {
  if (Array.isArray(event)) {
    throw eventRefusal(
      index,
      line,
      "an event must be a JSON object, got an array: the body holds more than one JSON text (is there " +
        "text after its array of events?); send one JSON array of events, or NDJSON with one event per line",
    );
  }
  checkEvent(event, index, line);
}

function checkHugeNumbers(event: JsonValue, where: string, line?: number): void {
  if (holdsHugeNumber(event)) throw hugeNumber(where, line);
}

function describe(value: JsonValue): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return "a string";
  return `a ${typeof value === "bigint" ? "number" : typeof value}`;
}

function reason(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  // V8 quotes the start of the text; keep the message short and free of the client's data
  // (`, "<text>"` for short texts, `, ..."<excerpt>"` for long ones)
  return message.replace(/, (?:\.\.\.)?"[\s\S]*$/, "").slice(0, 120);
}
