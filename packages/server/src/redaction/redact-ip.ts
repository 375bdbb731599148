import { isIP } from "node:net";
import type { WireValue } from "@qes/core";

/** what an address is replaced with */
export const REDACTED = "REDACTED";

// A candidate starts where a token starts: at the beginning, after a character that cannot be
// part of an address or a word, after `word:` (`ip:2001:db8::1`, `host:10.0.0.1`), or after a
// percent-encoded character (`%5B2001:db8::1%5D`, `http%3A%2F%2F10.0.0.1`). Inside a word or a
// longer dotted number (`v1.2.3.4`, `std::vector`, `1.2.3.4.5`) nothing starts.
const START = "(?<=^|[^0-9A-Za-z_.:%]|[G-Zg-z_-]:|%[0-9A-Fa-f]{2})";

/**
 * IPv6 candidates: hex groups and colons (at least two colons), an optional dotted IPv4 tail
 * (`::ffff:1.2.3.4`) and an optional zone (`%eth0`, or `%25eth0` inside a URL). The run is taken
 * whole and the longest valid address at its start is found in code (a trailing `:` or `:port`,
 * a sentence's full stop, are not part of it).
 */
const IPV6_CANDIDATE = new RegExp(
  `${START}(?=[0-9A-Fa-f:]*:[0-9A-Fa-f]*:)[0-9A-Fa-f:.]+(?:%(?:25)?(?![0-9A-Fa-f]{2}(?![0-9A-Za-z_]))[0-9A-Za-z_.~-]+)?`,
  "g",
);

/**
 * IPv4 candidates: four dotted decimals (leading zeros allowed, as some tools print them) not
 * followed by another `.digit` or a word character (`1.2.3.4.5`, `1.2.3.4abc` are not addresses).
 */
const IPV4_CANDIDATE = new RegExp(
  `${START.replace("_.:%", "_.%")}\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}(?![0-9A-Za-z_]|\\.\\d)`,
  "g",
);

/** cheap tests that let most strings through untouched without running the scanners */
const MAY_HOLD_IPV4 = /\d\.\d/;

/**
 * Replaces every IPv4 and IPv6 address in `text` with `REDACTED` (DESIGN.md §7). Candidates are
 * found by pattern and each is confirmed with `node:net` `isIP`, so things that only look alike —
 * versions (`1.2.3.4.5`), MAC addresses, times (`12:34:56`), UUIDs, `::` alone in prose — stay.
 * Ports, brackets, URL parts and CIDR suffixes around an address stay too (`[REDACTED]:443`).
 */
export function redactText(text: string): string {
  let out = text;
  if (out.includes(":")) out = out.replace(IPV6_CANDIDATE, redactIpv6Candidate);
  if (MAY_HOLD_IPV4.test(out)) out = out.replace(IPV4_CANDIDATE, redactIpv4Candidate);
  return out;
}

function redactIpv6Candidate(candidate: string, offset: number, whole: string): string {
  const end = longestIpv6Prefix(candidate, whole.charCodeAt(offset + candidate.length));
  return end === 0 ? candidate : REDACTED + candidate.slice(end);
}

/**
 * Length of the longest prefix of `candidate` that is an IPv6 address (with any zone) and ends at
 * a token boundary; 0 when there is none. `next` is the code of the character after the candidate.
 */
function longestIpv6Prefix(candidate: string, next: number): number {
  const zone = candidate.indexOf("%");
  if (zone !== -1) {
    const address = candidate.slice(0, zone);
    const zoneId = candidate.slice(zone + (candidate.startsWith("%25", zone) ? 3 : 1));
    if (!isWordCode(next) && isIpv6(address) && isIP(`${address}%${zoneId}`) === 6) return candidate.length;
    // not an address with a zone: look for one in the part before `%`
    return longestIpv6Prefix(address, 0x25);
  }
  // the whole run, when it is not glued to a word (`::bar`)
  if (!isWordCode(next) && isIpv6(candidate)) return candidate.length;
  // else the longest prefix cut before a `:` or a `.` that does not start another number
  for (let i = candidate.length - 1; i > 1; i--) {
    const c = candidate.charCodeAt(i);
    if (c !== 0x3a && c !== 0x2e) continue;
    if (c === 0x2e && isDigitCode(candidate.charCodeAt(i + 1))) continue;
    // `2001:db8::1:` is `2001:db8::1` followed by a colon, but `1::` must keep its `::`
    if (c === 0x3a && candidate.charCodeAt(i - 1) === 0x3a) continue;
    const prefix = candidate.slice(0, i);
    if (isIpv6(prefix)) return i;
  }
  return 0;
}

/** an IPv6 address with at least one hex digit (`::` alone is punctuation in prose) */
function isIpv6(s: string): boolean {
  return isIP(s) === 6 && /[0-9A-Fa-f]/.test(s);
}

function redactIpv4Candidate(candidate: string): string {
  // `010.000.000.001` is 10.0.0.1 written with leading zeros
  const normalised = candidate
    .split(".")
    .map((part) => String(Number(part)))
    .join(".");
  return isIP(normalised) === 4 ? REDACTED : candidate;
}

function isWordCode(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
}

function isDigitCode(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/**
 * A copy of a wire value with every string, at any depth, passed through `redactText`. Keys,
 * numbers, booleans and nulls are untouched.
 */
export function redactValue(value: WireValue): WireValue {
  if (typeof value === "string") return redactText(value);
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(redactValue);
  // a key named `__proto__` is data: a prototype-less object keeps it as an own property
  const out: { [key: string]: WireValue } = Object.create(null);
  for (const key of Object.keys(value)) out[key] = redactValue(value[key] as WireValue);
  return out;
}

/** every row redacted */
export function redactRows(rows: readonly Record<string, WireValue>[]): Record<string, WireValue>[] {
  return rows.map((row) => redactValue(row) as Record<string, WireValue>);
}
