import { QesError } from "../errors.ts";

/** A BigQuery format string (FORMAT_TIMESTAMP, PARSE_TIMESTAMP) as literal text and elements. */
export type TimeFormatPiece = { literal: string } | { element: string };

/** Elements every dialect writes: `%Y` → `Y`, `%E6S` → `E6S`, `%E*S` → `E*S`, `%Ez` → `Ez`. */
export const TIME_ELEMENTS = new Set([..."YmdHMSyjbBaAIpeFTDRzZs", "E*S", "E6S", "E3S", "Ez"]);

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
    // %E takes a modifier: %Ez (RFC 3339 offset) is one letter long, %E*S, %E6S two
    const element = next === "E" ? format.slice(i + 1, format[i + 2] === "z" ? i + 3 : i + 4) : (next ?? "");
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
    (p) =>
      "element" in p && (p.element === "z" || p.element === "Ez" || p.element === "Z" || p.element === "s"),
  );
}

/**
 * FORMAT_TIMESTAMP's text of `format` (`sql`, written from the bound instant `ts`), NULL for a
 * NULL instant. A format of no element but a zone's offset or name (`%Z`, `%z`, `abc`) writes
 * text that does not read the instant: 'UTC' and '+0000' were answers for a NULL TIMESTAMP.
 */
export function nullForNullInstant(format: string, ts: string, sql: string): string {
  const readsTs = parseTimeFormat(format).some(
    (p) => "element" in p && p.element !== "Z" && p.element !== "z" && p.element !== "Ez",
  );
  return readsTs ? sql : `CASE WHEN ${ts} IS NOT NULL THEN ${sql} END`;
}

/**
 * A PARSE_TIMESTAMP format with one offset element (`%z`, `%Ez`), split into the format of the
 * civil time around it and `re`, an anchored regular expression of the whole text whose groups
 * are 1 the text before the offset, 2 the offset, 3 the text after it. Engines' own parsers each
 * read a different subset of offsets (PostgreSQL's TZHTZM took '+0530' after `SS.US` as the
 * fraction .053 and dropped the offset; none read `Z` or all of +HH, +HHMM, +HH:MM), so each
 * dialect takes the offset out of the text with `re` (replace by `\1\3`, extract group 2),
 * parses the rest with its own function and applies the offset itself. Text `re` does not match
 * is BigQuery's error. Undefined for a format without an offset element, or with two.
 */
export function offsetSplit(format: string): { civil: string; re: string } | undefined {
  const pieces = parseTimeFormat(format);
  const at = pieces.findIndex((p) => "element" in p && (p.element === "z" || p.element === "Ez"));
  if (at < 0 || pieces.slice(at + 1).some((p) => "element" in p && (p.element === "z" || p.element === "Ez")))
    return undefined;
  const before = piecesRegex(pieces.slice(0, at));
  const after = piecesRegex(pieces.slice(at + 1));
  return {
    civil: writeTimeFormat([...pieces.slice(0, at), ...pieces.slice(at + 1)]),
    re: `^(\\s*${before})(${OFFSET_RE})(${after}\\s*)$`,
  };
}

/**
 * An offset as BigQuery's %z and %Ez read it when parsing (absl's ParseOffset): `Z`, `+HH`,
 * `+HHMM` or `+HH:MM`, either sign, hours 00-23 and minutes 00-59. No capturing groups.
 */
export const OFFSET_RE = "(?:Z|[+-](?:[01][0-9]|2[0-3])(?::?[0-5][0-9])?)";

/** What each element reads when parsing, as a regular expression (RE2 and PostgreSQL's ARE). */
const ELEMENT_RE: Record<string, string> = {
  Y: "[0-9]{1,4}",
  m: "[0-9]{1,2}",
  d: "[0-9]{1,2}",
  e: " ?[0-9]{1,2}",
  H: "[0-9]{1,2}",
  I: "[0-9]{1,2}",
  M: "[0-9]{1,2}",
  S: "[0-9]{1,2}",
  y: "[0-9]{1,2}",
  j: "[0-9]{1,3}",
  b: "[A-Za-z]+",
  B: "[A-Za-z]+",
  a: "[A-Za-z]+",
  A: "[A-Za-z]+",
  p: "[AaPp][Mm]",
  F: "[0-9]{1,4}-[0-9]{1,2}-[0-9]{1,2}",
  T: "[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}",
  D: "[0-9]{1,2}/[0-9]{1,2}/[0-9]{1,2}",
  R: "[0-9]{1,2}:[0-9]{1,2}",
  "E*S": "[0-9]{1,2}(?:[.][0-9]+)?",
  E6S: "[0-9]{1,2}(?:[.][0-9]+)?",
  E3S: "[0-9]{1,2}(?:[.][0-9]+)?",
  s: "-?[0-9]+",
  z: OFFSET_RE,
  Ez: OFFSET_RE,
  Z: "[A-Za-z_/+-]+",
};

/**
 * The whole text a PARSE_TIMESTAMP format accepts, anchored, for an engine whose own parser does
 * not check it: PostgreSQL's to_timestamp skips any character for a literal one and stops early
 * ('2025-01-15 08:00' under '%Y-%m-%dT%H:%M:%S' was 08:00:00, trailing text was ignored), where
 * BigQuery, DuckDB and ClickHouse refuse the text. Whitespace in the format matches any run of
 * whitespace, or none (BigQuery's rule).
 */
export function timeFormatRegex(format: string): string {
  return `^\\s*${piecesRegex(parseTimeFormat(format))}\\s*$`;
}

/** Pieces as a regular expression without capturing groups (literal text escaped). */
function piecesRegex(pieces: TimeFormatPiece[]): string {
  return pieces
    .map((p) =>
      "literal" in p
        ? p.literal
            .split(/(\s+)/)
            .map((part) => (/^\s+$/.test(part) ? "\\s*" : part.replace(/[\\^$.|?*+()[\]{}]/g, "\\$&")))
            .join("")
        : (ELEMENT_RE[p.element] ?? ".*?"),
    )
    .join("");
}

/**
 * SQL of the minutes east of UTC named by `offset`, the text OFFSET_RE matched (standard
 * SQL all three engines read). `int` is the dialect's integer type name.
 */
export function offsetMinutesSql(offset: string, int: string): string {
  const digits = `replace(${offset}, ':', '')`;
  // '' reads as 0: an engine may cast every branch of the CASE (ClickHouse folds a constant 'Z')
  const number = (at: number) => `CAST(coalesce(nullif(substr(${digits}, ${at}, 2), ''), '0') AS ${int})`;
  return `(CASE WHEN ${offset} = 'Z' THEN 0 ELSE (CASE WHEN substr(${offset}, 1, 1) = '-' THEN -1 ELSE 1 END) * (${number(2)} * 60 + ${number(4)}) END)`;
}

/**
 * The same format with `%E*S` read as `%S`: BigQuery's %E*S reads seconds with or without a
 * fraction, where the engines' `%S.%f` needs one. Undefined when the format has no %E*S.
 */
export function withoutFraction(format: string): string | undefined {
  const pieces = parseTimeFormat(format);
  if (!pieces.some((p) => "element" in p && p.element === "E*S")) return undefined;
  return writeTimeFormat(pieces.map((p) => ("element" in p && p.element === "E*S" ? { element: "S" } : p)));
}

/** Pieces back to a format string (parseTimeFormat's inverse). */
function writeTimeFormat(pieces: TimeFormatPiece[]): string {
  return pieces.map((p) => ("literal" in p ? p.literal.replace(/%/g, "%%") : `%${p.element}`)).join("");
}

/**
 * Elements that are no part of a DATE: BigQuery's PARSE_DATE refuses them, FORMAT_DATE writes
 * them as their own text (ZetaSQL's "cHIklMPpRrSsTXZz", with %E*S, %Ez and the like).
 */
const TIME_OF_DAY_ELEMENTS = new Set([
  "H",
  "I",
  "M",
  "S",
  "p",
  "R",
  "T",
  "s",
  "z",
  "Z",
  "E*S",
  "E6S",
  "E3S",
  "Ez",
]);

/**
 * A PARSE_DATE format, checked: BigQuery reads the text as PARSE_TIMESTAMP in UTC and keeps the
 * date, after refusing any element a DATE cannot hold. Returns the format unchanged.
 */
export function dateParseFormat(format: string): string {
  for (const p of parseTimeFormat(format)) {
    if ("element" in p && TIME_OF_DAY_ELEMENTS.has(p.element))
      throw new QesError("sql_invalid", `Invalid format: %${p.element} is not allowed for the DATE type.`);
  }
  return format;
}

/**
 * A FORMAT_DATE format as FORMAT_TIMESTAMP reads it at midnight UTC of the date: BigQuery writes
 * an element a DATE has not (`%H`, `%Z`) as its own text, not as midnight.
 */
export function dateFormatForTimestamp(format: string): string {
  return writeTimeFormat(
    parseTimeFormat(format).map((p) =>
      "element" in p && TIME_OF_DAY_ELEMENTS.has(p.element) ? { literal: `%${p.element}` } : p,
    ),
  );
}

/** elements that give a parsed time its year, month and day (`%s` gives the whole instant) */
const GIVES_YEAR = new Set(["Y", "y", "F", "D", "s"]);
const GIVES_MONTH = new Set(["m", "b", "B", "F", "D", "j", "s"]);
const GIVES_DAY = new Set(["d", "e", "F", "D", "j", "s"]);

/**
 * BigQuery's PARSE_TIMESTAMP (and PARSE_DATE) take the fields a format leaves out from
 * 1970-01-01 00:00:00: `PARSE_TIMESTAMP('%H:%M', '10:30')` is 1970-01-01 10:30:00 UTC. The engines
 * default otherwise (DuckDB 1900, ClickHouse 2000 or 1970, PostgreSQL the year 1 BC), so the date
 * fields a format lacks are put in front of it, and `prefix`, the text they read, in front of the
 * text. Times need nothing: every engine starts them at midnight.
 */
export function withEpochDefaults(format: string): { format: string; prefix: string } {
  const elements = new Set(parseTimeFormat(format).flatMap((p) => ("element" in p ? [p.element] : [])));
  const has = (set: ReadonlySet<string>) => [...elements].some((e) => set.has(e));
  const missing: [string, string][] = [];
  if (!has(GIVES_YEAR)) missing.push(["%Y", "1970"]);
  if (!has(GIVES_MONTH)) missing.push(["%m", "01"]);
  if (!has(GIVES_DAY)) missing.push(["%d", "01"]);
  if (missing.length === 0) return { format, prefix: "" };
  return {
    format: `${missing.map(([e]) => e).join("-")} ${format}`,
    prefix: `${missing.map(([, v]) => v).join("-")} `,
  };
}
