/** Character codes and the one scan the ingest body's JSON readers share (no parsing). */
export const OPEN_BRACE = 0x7b;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACE = 0x7d;
export const CLOSE_BRACKET = 0x5d;
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const NEWLINE = 0x0a;

export function isJsonWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === NEWLINE || c === 0x0d;
}

/**
 * The end (exclusive) of the object or array that opens at `start`: its matching bracket, brackets
 * inside strings skipped; the text's end when it never closes. Linear and not recursive: the
 * depth of a hostile body does not matter.
 */
export function bracketedEnd(text: string, start: number): number {
  const n = text.length;
  let depth = 0;
  let inString = false;
  for (let i = start; i < n; i++) {
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
