import { QesError } from "../errors.ts";

/** A BigQuery format string (FORMAT_TIMESTAMP, PARSE_TIMESTAMP) as literal text and elements. */
export type TimeFormatPiece = { literal: string } | { element: string };

/** Elements every dialect writes: `%Y` → `Y`, `%E6S` → `E6S`, `%E*S` → `E*S`. */
export const TIME_ELEMENTS = new Set([..."YmdHMSyjbBaAIpeFTDRzZs", "E*S", "E6S", "E3S"]);

export function parseTimeFormat(format: string): TimeFormatPiece[] {
  const pieces: TimeFormatPiece[] = [];
  let literal = "";
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    if (c !== "%") {
      literal += c;
      continue;
    }
    const next = format[i + 1];
    if (next === "%") {
      literal += "%";
      i++;
      continue;
    }
    const element = next === "E" ? format.slice(i + 1, i + 4) : (next ?? "");
    if (!TIME_ELEMENTS.has(element)) {
      throw new QesError("sql_invalid", `Format element %${element} is not supported (in '${format}').`);
    }
    if (literal) pieces.push({ literal });
    literal = "";
    pieces.push({ element });
    i += element.length;
  }
  if (literal) pieces.push({ literal });
  return pieces;
}

/**
 * Whether a PARSE_TIMESTAMP format reads an instant on its own — an offset or zone (`%z`, `%Z`)
 * or seconds since the epoch (`%s`) — so that its time-zone argument does not apply.
 */
export function readsInstant(format: string): boolean {
  return parseTimeFormat(format).some(
    (p) => "element" in p && (p.element === "z" || p.element === "Z" || p.element === "s"),
  );
}
