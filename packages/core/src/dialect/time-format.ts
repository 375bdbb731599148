import { QesError } from "../errors.ts";

/** A BigQuery format string (FORMAT_TIMESTAMP, PARSE_TIMESTAMP) as literal text and elements. */
export type TimeFormatPiece = { literal: string } | { element: string };

/**
 * Elements every dialect writes: `%Y` → `Y`, `%E6S` → `E6S`, `%E*S` → `E*S`, `%Ez` → `Ez`.
 * `%E0S`…`%E9S` are seconds with that many fractional digits.
 */
export const TIME_ELEMENTS = new Set([
  ..."YmdHMSyjbBaAIpeFTDRzZskluc",
  "E*S",
  ...Array.from({ length: 10 }, (_, n) => `E${n}S`),
  "Ez",
]);

/** `%c`, BigQuery's date and time representation (English): `Wed Jan 20 21:47:00 2021` */
const DATE_AND_TIME = "%a %b %e %H:%M:%S %Y";

/** `expand`: %c as the elements it stands for (false: as the element `c`) */
export function parseTimeFormat(format: string, expand = true): TimeFormatPiece[] {
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
    // %c stands for elements every dialect writes and reads
    if (element === "c" && expand) pieces.push(...parseTimeFormat(DATE_AND_TIME));
    else pieces.push({ element });
    i += element.length;
  }
  if (literal) pieces.push({ literal });
  return pieces;
}

/**
 * The digits of fraction `%E<n>S` writes (n), or "*" for `%E*S` (as many as the value has, none
 * and no point for whole seconds — absl's FormatTime); undefined for any other element.
 */
export function fractionDigits(element: string): number | "*" | undefined {
  if (element === "E*S") return "*";
  const m = /^E([0-9])S$/.exec(element);
  return m ? Number(m[1]) : undefined;
}

/**
 * A PARSE_TIMESTAMP format as the dialects read it: `%E<n>S` reads seconds with any fraction, or
 * none, as `%E*S` does (absl's ParseTime), so each is written `%E*S`.
 */
export function readingFormat(format: string): string {
  return writeTimeFormat(
    parseTimeFormat(format).map((p) =>
      "element" in p && fractionDigits(p.element) !== undefined ? { element: "E*S" } : p,
    ),
  );
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
 * A PARSE_TIMESTAMP format with offset elements (`%z`, `%Ez`), split into the format of the
 * civil time around them and `re`, an anchored regular expression of the whole text whose groups
 * alternate: the civil text before the first offset, the offset, the civil text after it, … .
 * Engines' own parsers each read a different subset of offsets (PostgreSQL's TZHTZM took '+0530'
 * after `SS.US` as the fraction .053 and dropped the offset; none read `Z` or all of +HH, +HHMM,
 * +HH:MM), so each dialect takes the offsets out of the text with `re` (replaced by `keep`, the
 * civil groups), extracts group `offsetGroup` — the last offset, which BigQuery applies (absl's
 * ParseTime reads each in turn into one offset) — parses the rest with its own function and
 * applies the offset itself. Text `re` does not match is BigQuery's error. Undefined for a format
 * without an offset element.
 */
export function offsetSplit(
  format: string,
): { civil: string; re: string; keep: string; offsetGroup: number } | undefined {
  const pieces = parseTimeFormat(format);
  const isOffset = (p: TimeFormatPiece) => "element" in p && (p.element === "z" || p.element === "Ez");
  const segments: TimeFormatPiece[][] = [[]];
  for (const p of pieces) {
    if (isOffset(p)) segments.push([]);
    else segments[segments.length - 1]!.push(p);
  }
  const offsets = segments.length - 1;
  if (offsets === 0) return undefined;
  // groups \1 … \9 only: two offsets per group of civil text at most four times
  if (offsets > 4)
    throw new QesError("sql_invalid", `PARSE_TIMESTAMP reads at most 4 offsets (in '${format}').`);
  const groups = segments.map((segment) => `(${piecesRegex(segment)})`);
  const last = groups.length - 1;
  groups[0] = `(\\s*${piecesRegex(segments[0]!)})`;
  groups[last] = `(${piecesRegex(segments[last]!)}\\s*)`;
  return {
    civil: writeTimeFormat(pieces.filter((p) => !isOffset(p))),
    re: `^${groups.join(`(${OFFSET_RE})`)}$`,
    keep: groups.map((_, i) => `\\${2 * i + 1}`).join(""),
    offsetGroup: 2 * offsets,
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
        : (ELEMENT_RE[fractionDigits(p.element) === undefined ? p.element : "E*S"] ?? ".*?"),
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
  ...Array.from({ length: 10 }, (_, n) => `E${n}S`),
  "Ez",
  "k",
  "l",
  "c",
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
 * A FORMAT_DATETIME format, checked: a DATETIME is in no time zone, so an element that writes one
 * (`%z`, `%Ez`, `%Z`) is refused rather than written as UTC's. Returns the format unchanged.
 */
export function datetimeFormat(format: string): string {
  for (const p of parseTimeFormat(format)) {
    if ("element" in p && (p.element === "z" || p.element === "Ez" || p.element === "Z"))
      throw new QesError(
        "sql_invalid",
        `Invalid format: %${p.element} is not allowed for the DATETIME type.`,
      );
  }
  return format;
}

/**
 * A FORMAT_DATE format as FORMAT_TIMESTAMP reads it at midnight UTC of the date: BigQuery writes
 * an element a DATE has not (`%H`, `%Z`) as its own text, not as midnight.
 */
export function dateFormatForTimestamp(format: string): string {
  return writeTimeFormat(
    parseTimeFormat(format, false).map((p) =>
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

/** How a dialect writes the few string operations `secondsWithFractionSql` needs. */
export interface FractionSqlOps {
  /** an integer as its decimal text */
  text(integer: string): string;
  /** text without its trailing zeros */
  trimZeros(text: string): string;
}

/**
 * `%E<n>S` / `%E*S` when formatting: `seconds` (two-digit text) with n digits of the fraction
 * `micros` (0…999999) holds, truncated, padded with zeros past six (absl's FormatTime), the point
 * left out for n = 0; for `%E*S` the fraction's digits without trailing zeros, and no point for
 * whole seconds. lpad, rpad, substr and `||` (NULL of a NULL operand) are the same in every
 * engine here.
 */
export function secondsWithFractionSql(
  digits: number | "*",
  seconds: string,
  micros: string,
  ops: FractionSqlOps,
): string {
  const six = `lpad(${ops.text(micros)}, 6, '0')`;
  if (digits === 0) return seconds;
  if (digits === "*")
    return `(${seconds} || CASE WHEN ${micros} = 0 THEN '' ELSE '.' || ${ops.trimZeros(six)} END)`;
  return `(${seconds} || '.' || ${digits <= 6 ? `substr(${six}, 1, ${digits})` : `rpad(${six}, ${digits}, '0')`})`;
}
