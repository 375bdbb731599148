/**
 * Redacting JSON text inside an engine (records and arrays read from events, DESIGN.md §11): the
 * address pattern sees each escape's last letter or digit where the decoded string holds a control
 * character. `\t2001:db8::17x` then reads as a compressed address glued to words on both sides —
 * kept, as `std::vector` is, so consumer SQL that unnests the array got it whole — and in
 * `\u00011.2.3.4` an address starts inside the escape, whose replacement left JSON no engine reads.
 * So engines mark the end of every escape with a character JSON text never holds raw (a control
 * character must be escaped there), redact, and take the marks out: the pattern meets the same
 * boundaries as in the decoded strings, and escapes stay whole.
 */

/** one JSON escape, captured as group 1 (`\\` is one escape: the `t` of `\\t` is a letter) */
export const JSON_ESCAPE_PATTERN = '(\\\\(?:[bfnrt"/]|\\\\|u[0-9A-Fa-f]{4}))';

/** the code point of the mark put after each escape: U+0001, never raw in JSON text */
export const ESCAPE_MARK_CODE_POINT = 1;
