/**
 * The one definition of what an IP address is, for the engine and for the pass over the result
 * alike (DESIGN.md §7, §11). It is a regular expression in the syntax RE2, JavaScript and (after
 * `toPostgresRegex`) PostgreSQL read the same way — no lookaround, no backreference — written so
 * that every address matches (and, but for runs of more than eight IPv6 groups, only addresses
 * `node:net` `isIP` accepts), and the match at a position is the longest one there, so engines
 * that take the leftmost-first match (RE2, JavaScript) and the leftmost-longest one (PostgreSQL)
 * replace the same text.
 *
 * What counts:
 * - IPv4 anywhere, glued to word characters too (`ip_10.0.0.1`, `x10.0.0.1`, `10.0.0.1_`), with
 *   `%2E` for a dot (`10%2E0%2E0%2E1`). A dotted run longer than an address keeps its first
 *   address's worth redacted (`1.2.3.4.5` → `REDACTED.5`: tcpdump writes `10.0.0.1.443`).
 * - IPv6 in full or with an IPv4 tail anywhere, glued to word characters or not.
 * - Compressed IPv6 (`fe80::1`) anywhere too, glued on both sides included (`srv_2001:db8::1_x`,
 *   `a_fe80::1_b`, `x::1y`), when it is no C++/Rust path: two or more groups on one side of `::`
 *   (a single colon in the run: `2001:db8::1`, `fe80::1:2`), or a digit just after `::`
 *   (`fe80::1`, `::8a2e`: an identifier never starts with a digit). Otherwise (at most one group
 *   on each side, the one after `::` starting with a letter) it is an address unless both ends
 *   touch a word: `std::vector`, `crate::module::fn`, `Interface::Address` stay prose, and so do
 *   `h2::codec`, `sha256::digest`, `Vec3::new`, `u8::MAX` (a digit BEFORE `::` is common in
 *   identifiers, so it does not count), at the price of `xfe80::abcdx` staying too.
 * - Never in part: a match cannot begin or end next to a `group:` of its own address, since the
 *   two-groups rule then holds for the whole run, which starts further left (leftmost wins), and
 *   the unglued forms take one group per side. (`x2001:db8::1y` once gave `x2001:REDACTEDy`.)
 * - `%3A` for a colon, glued or not; a zone (`%eth0`, `%25eth0`) goes with its address.
 * - A word character is an ASCII one (`[0-9A-Za-z_]`) everywhere: `\b` in RE2 and JavaScript, and
 *   PostgreSQL's `\y` under `COLLATE "C"` (postgres-dialect.ts), so `éfe80::abcdé` is not glued.
 */

const HEX = "[0-9A-Fa-f]";
const GROUP = `${HEX}{1,4}`;
const OCTET = "(?:25[0-5]|2[0-4][0-9]|[01]?[0-9]?[0-9])";
const DOT = "(?:\\.|%2[Ee])";
const COLON = "(?::|%3[Aa])";
const ZONE_CHAR = "[0-9A-Za-z_.~-]";
// `%eth0`, `%en0`, `%25eth0`; not `%5D` (a percent-encoded `]` after the address), and not
// `%3A` or `%2E`, which the pattern reads as a colon or a dot: a zone starting with either made
// a longer match the leftmost-longest engine took (`fe80::1%3Aeth0` whole, `REDACTEDth0` in RE2)
const PERCENT_BYTE = "(?:[014-9A-Fa-f][0-9A-Fa-f]|2[0-9A-Da-dFf]|3[0-9B-Fb-f])";
const ZONE = `(?:%25${ZONE_CHAR}+|%[G-Zg-z_.~-]${ZONE_CHAR}*|%${HEX}[G-Zg-z_.~-]${ZONE_CHAR}*|%${PERCENT_BYTE}${ZONE_CHAR}+)`;

const ipv4 = (dot: string) => `${OCTET}(?:${dot}${OCTET}){3}`;
const times = (s: string, n: number) => (n <= 0 ? "" : n === 1 ? `(?:${s})` : `(?:${s}){${n}}`);
const upTo = (s: string, n: number) => (n <= 0 ? "" : `(?:${s}){0,${n}}`);

/**
 * IPv6 forms, longest first where two could start at one place (the unconditional compressed
 * forms before the ones with a boundary; `\B::x` before `x::y\b`). Few alternatives on purpose:
 * PostgreSQL's regex engine pays for each one at every character (one alternative per count of
 * groups before `::`, and another set for `%3A`, ran ten times slower there). So the groups on
 * either side of `::` are counted up to seven each (eight after it where two are required), not
 * seven in all, and `%3A` is a colon everywhere: a run of more than eight groups around `::` is no
 * address and is redacted as one.
 */
function ipv6Forms(percent: boolean): string[] {
  const colon = percent ? COLON : ":";
  const g = GROUP;
  const cg = `${colon}${g}`;
  const v4 = ipv4(percent ? DOT : "\\.");
  const zone = percent ? `(?:${ZONE})?` : "";
  const groups = `${g}${upTo(cg, 6)}`;
  const twoOrMore = `${g}(?:${cg}){1,6}`;
  const both = `${colon}${colon}`;
  return [
    // six groups and an IPv4 tail; eight groups
    `${g}${times(cg, 5)}${colon}${v4}`,
    `${g}${times(cg, 7)}${zone}`,
    // `::` and an IPv4 tail
    `(?:${g}${upTo(cg, 4)})?${both}${upTo(`${g}${colon}`, 5)}${v4}`,
    // `::` anywhere, glued to words or not, when what is around it is no identifier: two groups
    // on one side of it, or a digit just after it
    `${twoOrMore}${both}(?:${groups}${zone})?`,
    `(?:${groups})?${both}(?:[0-9]${HEX}{0,3}|${g}${cg})${upTo(cg, 6)}${zone}`,
    // otherwise one group or none on each side: an address unless both ends touch a word
    // (`std::vector`, `crate::module::fn`, `h2::codec`)
    `\\b${g}${both}(?:${g}${zone})?`,
    `\\B${both}${g}${zone}`,
    `${HEX}{0,4}${both}${g}${zone}\\b`,
    // (`%3A` ends in a word character: after it, no word is `\b`, not `\B`)
    percent ? `${g}${COLON}(?::\\B|%3[Aa]\\b)` : `${g}::\\B`,
  ];
}

/** The IPv4 form alone: the one alternative of ADDRESS_PATTERN that needs no colon. */
export const IPV4_ADDRESS_PATTERN = ipv4(DOT);

/** The address pattern (RE2 syntax, no flags): each match is one address, replaced whole. */
export const ADDRESS_PATTERN = [...ipv6Forms(true), IPV4_ADDRESS_PATTERN].join("|");

/**
 * ADDRESS_PATTERN without the paths that need a `%` (`%3A` for a colon, `%2E` for a dot, a zone):
 * on a text without `%` it has exactly ADDRESS_PATTERN's matches, from a smaller automaton
 * (PostgreSQL, whose cost grows with it, reads such text in ~60 % of the time).
 */
export const ADDRESS_PATTERN_WITHOUT_PERCENT = [...ipv6Forms(false), ipv4("\\.")].join("|");

/**
 * What every IPv6 form's match holds: `::` (or `%3A` for either colon), or five groups each
 * followed by a colon (eight groups, or six and an IPv4 tail). In a text without a match of it,
 * ADDRESS_PATTERN can match only as IPV4_ADDRESS_PATTERN does, at the same places (the one
 * alternative left, leftmost-first or leftmost-longest alike): an engine whose regex pays for
 * every alternative at every character (PostgreSQL) tests this first and runs the IPv4 form alone
 * on such text, which is most log text.
 */
export const IPV6_HINT_PATTERN = `${COLON}${COLON}|(?:${GROUP}${COLON}){5}`;

/**
 * The characters an address is written with (its zone's included): every match of
 * ADDRESS_PATTERN lies inside one run of them, and the characters around such a run are no word
 * characters, so `\b` and `\B` read the same in the run alone as in the whole text. A text can
 * be redacted run by run, or in pieces cut between runs.
 */
export const ADDRESS_CHARS = "[0-9A-Za-z_.:%~-]";

/** what an address is replaced with */
export const REDACTED = "REDACTED";
