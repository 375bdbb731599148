/**
 * The list syntax of the variables that name sources (`QES_RETENTION_DAYS`, `QES_INGEST_KEYS`):
 * items split by a separator, where a name may be written as a JSON string (`"eu,west"`) so that
 * it can hold the separators, quotes and spaces at its ends — every character the source name
 * rule allows.
 */

/**
 * Splits `text` at every `separator` outside a JSON string. An unclosed string runs to the end
 * (`unquoteName` then names it).
 */
export function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === "\\") i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === separator) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/** A name as listed: trimmed, or the value of a JSON string. */
export type ListedName = { name: string; quoted: boolean } | { error: string };

export function unquoteName(text: string): ListedName {
  const t = text.trim();
  if (!t.startsWith('"')) return { name: t, quoted: false };
  try {
    const value: unknown = JSON.parse(t);
    if (typeof value === "string") return { name: value, quoted: true };
  } catch {
    // named below
  }
  return {
    error: `${t.length > 60 ? `${t.slice(0, 60)}…` : t} is not one JSON string (a quoted name is one, with its closing quote)`,
  };
}
