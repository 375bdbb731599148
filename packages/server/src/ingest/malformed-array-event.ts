import { QesError } from "@qes/core";
import {
  BACKSLASH,
  bracketedEnd,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COMMA,
  isJsonWhitespace,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
} from "./json-text-scan.ts";

/**
 * Which event of a JSON array body (or of `{"batch": [...]}`) keeps the body from parsing, so the
 * refusal names its 0-based index as it does for any other bad event (DESIGN.md §10): a shipper's
 * batch with one truncated or hand-broken event otherwise got only "the body is not valid JSON"
 * and V8's offset. Called only once `JSON.parse` has refused the whole body; each element is
 * delimited by a linear scan (brackets inside strings skipped) and parsed alone. Undefined when
 * the body is not such an array or every element parses (the fault is elsewhere).
 *
 * @param reason turns a parser's error into the short reason the message carries
 */
export function malformedArrayEvent(text: string, reason: (e: unknown) => string): QesError | undefined {
  let i = arrayStart(text);
  if (i === undefined) return undefined;
  const n = text.length;
  for (let index = 0; ; index++) {
    i = skipWhitespace(text, i);
    if (i >= n) return refuse(`event ${index}`, "the body ends before it: truncated?");
    if (index === 0 && text.charCodeAt(i) === CLOSE_BRACKET) return undefined;
    const end = valueEnd(text, i);
    try {
      JSON.parse(text.slice(i, end));
    } catch (e) {
      return refuse(`event ${index}`, reason(e));
    }
    i = skipWhitespace(text, end);
    const c = text.charCodeAt(i);
    if (i >= n) return refuse(`after event ${index}`, 'the body ends before the array\'s "]": truncated?');
    if (c === CLOSE_BRACKET) return undefined;
    if (c !== COMMA) return refuse(`after event ${index}`, 'expected "," or "]" between events');
    i++;
    if (text.charCodeAt(skipWhitespace(text, i)) === CLOSE_BRACKET)
      return refuse(`after event ${index}`, 'a "," before "]": JSON allows no trailing comma');
  }
}

/** a body's array of events: `[` first, or the value of a leading `"batch"` key */
const BATCH_PREFIX = /^\s*\{\s*"batch"\s*:\s*\[/;

function arrayStart(text: string): number | undefined {
  const first = skipWhitespace(text, 0);
  if (text.charCodeAt(first) === OPEN_BRACKET) return first + 1;
  const batch = BATCH_PREFIX.exec(text.slice(first, first + 64));
  return batch ? first + batch[0].length : undefined;
}

function skipWhitespace(text: string, from: number): number {
  let i = from;
  while (i < text.length && (isJsonWhitespace(text.charCodeAt(i)) || text.charCodeAt(i) === 0xfeff)) i++;
  return i;
}

/** where the value starting at `start` ends: its matching bracket, closing quote, or the next delimiter */
function valueEnd(text: string, start: number): number {
  const n = text.length;
  const c = text.charCodeAt(start);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) return bracketedEnd(text, start);
  let i = start;
  if (c === QUOTE) {
    for (i = start + 1; i < n; i++) {
      const d = text.charCodeAt(i);
      if (d === BACKSLASH) i++;
      else if (d === QUOTE) return i + 1;
    }
    return n;
  }
  for (; i < n; i++) {
    const d = text.charCodeAt(i);
    if (d === COMMA || d === CLOSE_BRACKET || d === CLOSE_BRACE || isJsonWhitespace(d)) break;
  }
  return i;
}

function refuse(where: string, why: string): QesError {
  return new QesError("invalid_event", `${where}: not valid JSON (${why})`);
}
