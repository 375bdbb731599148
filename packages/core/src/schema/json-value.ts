import { parse as losslessParse, stringify as losslessStringify } from "lossless-json";

/**
 * A parsed JSON value as the schema code sees it. Numbers keep their exactness: an integer literal
 * beyond ±2^53 (and within INT64) is a `bigint`; every other number is a `number`.
 */
export type JsonValue = null | boolean | string | number | bigint | JsonValue[] | JsonObject;
export type JsonObject = { [key: string]: JsonValue };

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const INTEGER_LITERAL = /^-?\d+$/;
/** 16 digits in a row: a number literal that may not survive `JSON.parse` exactly. */
const LONG_DIGIT_RUN = /\d{16}/;

function parseNumberLiteral(text: string): number | bigint {
  const n = Number(text);
  if (Number.isSafeInteger(n) || !INTEGER_LITERAL.test(text)) return n;
  const b = BigInt(text);
  // Beyond INT64 a number is FLOAT64 (BigQuery has no wider integer).
  return b >= INT64_MIN && b <= INT64_MAX ? b : n;
}

/**
 * Parses JSON text without losing integer precision. Fast path: `JSON.parse`, which is exact
 * unless it met an integer literal beyond 2^53; only when its result holds an integral number
 * beyond that and the text has a run of 16+ digits (without which no integer literal can exceed
 * 2^53) is the text parsed again with lossless-json, INT64 literals as `bigint`. Looking for such
 * numbers in the parsed value costs about half of searching every text for 16 digits, which most
 * log lines have (microsecond timestamps, ids) without needing the exact parser. Text that
 * JSON.parse refuses goes to the parser that handled it before, for the same error. Duplicate
 * keys keep the last value, as `JSON.parse` does. Throws SyntaxError on malformed JSON.
 */
export function parseJsonText(text: string): JsonValue {
  let value: JsonValue;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch (e) {
    if (LONG_DIGIT_RUN.test(text)) return parseLossless(text);
    throw e;
  }
  return exactJsonValue(value, text);
}

/**
 * `value`, which is `JSON.parse(text)`, with its integers beyond 2^53 read exactly from `text`
 * (see parseJsonText): for a caller that ran JSON.parse itself. Parses `text` again only when
 * `value` holds such an integer.
 */
export function exactJsonValue(value: JsonValue, text: string): JsonValue {
  return (numberFlags(value) & INEXACT_INTEGER) !== 0 && LONG_DIGIT_RUN.test(text)
    ? parseLossless(text)
    : value;
}

/** An event's value as `eventJsonValue` makes it, and whether it holds a number beyond FLOAT64. */
export interface EventJson {
  value: JsonValue;
  /** a number literal beyond FLOAT64's range (±1.8e308) was there: JSON.parse made it ±Infinity */
  huge: boolean;
}

/**
 * `eventJsonValue`, and what the same walk over the numbers found beyond FLOAT64's range: every
 * event is walked for inexact integers anyway, and the test of its text this replaced (an exponent
 * of three digits, or 309 digits in a row) matched half of all edge events, whose hex digests hold
 * `3e123`, so those were walked a second time, after a regex that cost more than the walk.
 */
export function eventJson(value: JsonValue, text: string): EventJson {
  const flags = numberFlags(value);
  const exact = (flags & INEXACT_INTEGER) !== 0 && LONG_DIGIT_RUN.test(text) ? parseLossless(text) : value;
  return {
    value: holdsNoUnstorableEscape(text) ? exact : storableStrings(exact),
    huge: (flags & HUGE_NUMBER) !== 0,
  };
}

/**
 * An event's value from its JSON text (`value` = `JSON.parse(text)`): exact, and with every string
 * and key made storable by every engine (`storableStrings`). For the ways events come in (load,
 * ingest); what comes back from a store was cleaned on its way in, so the read path
 * (`parseJsonText`, once per record cell of a result) does not look again.
 */
export function eventJsonValue(value: JsonValue, text: string): JsonValue {
  return eventJson(value, text).value;
}

/** `parseJsonText` for an event's text: exact and storable (`eventJsonValue`). */
export function parseEventJsonText(text: string): JsonValue {
  const value = parseJsonText(text);
  return holdsNoUnstorableEscape(text) ? value : storableStrings(value);
}

/**
 * Text from JSON can only hold a NUL or a lone surrogate through an escape (`\u0000`,
 * `\ud800`): a body decoded as UTF-8 has neither raw. Without such an escape there is nothing to
 * clean (an escaped surrogate pair, as Python's json.dumps writes every emoji, only costs a walk).
 */
function holdsNoUnstorableEscape(text: string): boolean {
  // most lines hold no escape at all: one search for that, before the regex (a tenth of its cost)
  return !text.includes("\\u") || (!text.includes("\\u0000") && !/\\u[dD][89abcdefABCDEF]/.test(text));
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is one of the characters this finds
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, "g");

/** NUL taken out, a lone surrogate made U+FFFD (what String.prototype.toWellFormed does) */
function storableText(text: string): string {
  return UNSTORABLE.test(text) ? text.replace(UNSTORABLE_ALL, (c) => (c === "\u0000" ? "" : "\uFFFD")) : text;
}

/**
 * Two keys of one object that are one key once made storable (`"id"` and `"\u0000id"`, or two
 * lone surrogates before the same text): keeping either value would drop the other without a
 * word, and which one reached `id` decided the event's identity. The event is refused instead
 * (the callers name it).
 */
export class MergedKeysError extends Error {
  constructor(first: string, second: string) {
    super(
      `the keys ${JSON.stringify(first)} and ${JSON.stringify(second)} are one key once NUL characters ` +
        "are taken out and lone surrogates replaced (as every engine stores keys); send distinct names",
    );
    this.name = "MergedKeysError";
  }
}

/** the object itself, or a copy in the same key order with its keys made storable */
function withStorableKeys(obj: JsonObject): JsonObject {
  let found = false;
  for (const key in obj) {
    if (UNSTORABLE.test(key)) {
      found = true;
      break;
    }
  }
  if (!found) return obj;
  const copy: JsonObject = {};
  const sentAs = new Map<string, string>();
  for (const key of Object.keys(obj)) {
    const clean = storableText(key);
    const earlier = sentAs.get(clean);
    if (earlier !== undefined) throw new MergedKeysError(earlier, key);
    sentAs.set(clean, key);
    setOwn(copy, clean, obj[key]!);
  }
  return copy;
}

/**
 * `value` with every string and key made storable by every engine, at any depth: NUL taken out,
 * a lone surrogate replaced by U+FFFD. PostgreSQL cannot store NUL in text and dropped it, DuckDB
 * and ClickHouse kept it; DuckDB and PostgreSQL stored a lone surrogate as U+FFFD, ClickHouse
 * refused the whole insert (a 500). Cleaned once, at parsing, every backend stores the same text,
 * and an id derived from the content is the same on all. Iterative (any depth).
 */
function storableStrings(value: JsonValue): JsonValue {
  if (typeof value === "string") return storableText(value);
  if (typeof value !== "object" || value === null) return value;
  const root = Array.isArray(value) ? value : withStorableKeys(value);
  const pending: (JsonValue[] | JsonObject)[] = [root as JsonValue[] | JsonObject];
  while (pending.length > 0) {
    const container = pending.pop()!;
    const slots = Array.isArray(container) ? container.keys() : Object.keys(container).values();
    for (const slot of slots) {
      const el = (container as Record<string | number, JsonValue>)[slot]!;
      if (typeof el === "string") {
        const clean = storableText(el);
        if (clean !== el) (container as Record<string | number, JsonValue>)[slot] = clean;
      } else if (typeof el === "object" && el !== null) {
        const clean = Array.isArray(el) ? el : withStorableKeys(el);
        if (clean !== el) setOwn(container as Record<string | number, JsonValue>, slot as string, clean);
        pending.push(clean as JsonValue[] | JsonObject);
      }
    }
  }
  return root;
}

function parseLossless(text: string): JsonValue {
  return losslessParse(text, null, {
    parseNumber: parseNumberLiteral,
    onDuplicateKey: ({ newValue }) => newValue,
  }) as JsonValue;
}

/** `numberFlags` bits */
const INEXACT_INTEGER = 1;
const HUGE_NUMBER = 2;

function flagsOfNumber(n: number): number {
  if (Number.isSafeInteger(n)) return 0;
  if (Number.isInteger(n)) return INEXACT_INTEGER;
  return Number.isFinite(n) ? 0 : HUGE_NUMBER;
}

/**
 * What the numbers of a value parsed by JSON.parse hold: an integral number beyond ±(2^53 − 1),
 * which may not be the literal it was written as (INEXACT_INTEGER), and ±Infinity, a literal
 * beyond FLOAT64's range (HUGE_NUMBER). Iterative: JSON.parse accepts any depth, a recursion
 * would not.
 */
function numberFlags(value: JsonValue): number {
  if (typeof value !== "object" || value === null)
    return typeof value === "number" ? flagsOfNumber(value) : 0;
  let flags = 0;
  const pending: JsonValue[] = [value];
  while (pending.length > 0) {
    const v = pending.pop()!;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const el = v[i]!;
        if (typeof el === "object" && el !== null) pending.push(el);
        else if (typeof el === "number" && !Number.isSafeInteger(el)) {
          flags |= flagsOfNumber(el);
          if (flags === (INEXACT_INTEGER | HUGE_NUMBER)) return flags;
        }
      }
    } else {
      const obj = v as JsonObject;
      for (const key in obj) {
        const el = obj[key]!;
        if (typeof el === "object" && el !== null) pending.push(el);
        else if (typeof el === "number" && !Number.isSafeInteger(el)) {
          flags |= flagsOfNumber(el);
          if (flags === (INEXACT_INTEGER | HUGE_NUMBER)) return flags;
        }
      }
    }
  }
  return flags;
}

/**
 * Does a parsed value hold a number beyond FLOAT64's range (±1.8e308), which JSON.parse made
 * ±Infinity? Iterative (any depth).
 */
export function holdsHugeNumber(value: JsonValue): boolean {
  const pending: JsonValue[] = [value];
  while (pending.length > 0) {
    const v = pending.pop()!;
    if (typeof v === "number") {
      if (!Number.isFinite(v)) return true;
    } else if (Array.isArray(v)) for (const el of v) pending.push(el);
    else if (typeof v === "object" && v !== null) for (const key in v) pending.push(v[key]!);
  }
  return false;
}

/** JSON text of a value; `bigint`s are written as their exact digits. */
export function jsonText(value: JsonValue): string {
  try {
    return JSON.stringify(value);
  } catch {
    // Only BigInt makes JSON.stringify throw on parsed JSON; lossless-json writes it exactly.
    return losslessStringify(value) as string;
  }
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** True for a JSON number that is INT64: integral and within INT64 range. */
export function isInt64Number(value: number | bigint): boolean {
  if (typeof value === "bigint") return true;
  return Number.isInteger(value) && Math.abs(value) < 2 ** 63;
}

/** The text of a value for a STRING column: strings as is, anything else as its JSON text. */
export function textOfJsonValue(value: JsonValue): string | null {
  if (value === null) return null;
  if (typeof value === "string") return value;
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return jsonText(value);
}

/**
 * Sets an own property even for the key `__proto__` (which plain assignment would turn into a
 * prototype change): event keys are data, whatever they are called.
 */
export function setOwn<T>(target: Record<string, T>, key: string, value: T): void {
  if (key === "__proto__")
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}
