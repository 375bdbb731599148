import { QesError } from "@qes/core";

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

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;

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
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d && c !== 0xfeff) break;
  }
  return i;
}

/** where the value starting at `start` ends: its matching bracket, closing quote, or the next delimiter */
function valueEnd(text: string, start: number): number {
  const n = text.length;
  const c = text.charCodeAt(start);
  let i = start;
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    let depth = 0;
    let inString = false;
    for (; i < n; i++) {
      const d = text.charCodeAt(i);
      if (inString) {
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) inString = false;
      } else if (d === QUOTE) inString = true;
      else if (d === OPEN_BRACE || d === OPEN_BRACKET) depth++;
      else if ((d === CLOSE_BRACE || d === CLOSE_BRACKET) && --depth === 0) return i + 1;
    }
    return n;
  }
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
    if (
      d === COMMA ||
      d === CLOSE_BRACKET ||
      d === CLOSE_BRACE ||
      d === 0x20 ||
      d === 0x0a ||
      d === 0x0d ||
      d === 0x09
    )
      break;
  }
  return i;
}

function refuse(where: string, why: string): QesError {
  return new QesError("invalid_event", `${where}: not valid JSON (${why})`);
}
