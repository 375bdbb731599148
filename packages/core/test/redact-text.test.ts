import { isIP } from "node:net";
import { RE2JS } from "re2js";
import { describe, expect, it } from "vitest";
import { checkRegexPattern } from "../src/index.ts";
import {
  ADDRESS_CHARS,
  ADDRESS_PATTERN,
  ADDRESS_PATTERN_WITHOUT_PERCENT,
  IPV4_ADDRESS_PATTERN,
  IPV6_HINT_PATTERN,
} from "../src/redaction/address-pattern.ts";
import { redactRows, redactText, redactValue } from "../src/redaction/redact-text.ts";

const REDACTED_FORMS: Array<[string, string]> = [
  ["1.2.3.4", "REDACTED"],
  ["a 1.2.3.4 b", "a REDACTED b"],
  ["1.2.3.4,5.6.7.8", "REDACTED,REDACTED"],
  ["x-forwarded-for:1.2.3.4", "x-forwarded-for:REDACTED"],
  ["ws://10.1.2.3:9000/socket", "ws://REDACTED:9000/socket"],
  ["'192.0.2.1'", "'REDACTED'"],
  ["[::1]", "[REDACTED]"],
  ["::1.2.3.4", "REDACTED"],
  ["fe80::1%eth0]:80", "REDACTED]:80"],
  ["x-real-ip:2001:db8::11", "x-real-ip:REDACTED"],
  ["2001:db8::8:443", "REDACTED"],
  ["FE80::ABCD", "REDACTED"],
  ['"2001:db8::1"', '"REDACTED"'],
  ["addr=2001:db8::1;", "addr=REDACTED;"],
  ["2001:db8::1\n2001:db8::2", "REDACTED\nREDACTED"],
  ["::ffff:192.168.0.1 and 10.0.0.1", "REDACTED and REDACTED"],
  // glued to word characters (issue 12): an address inside a word is still an address
  ["ip_10.0.0.1", "ip_REDACTED"],
  ["x10.0.0.1", "xREDACTED"],
  ["10.0.0.1_", "REDACTED_"],
  ["a_fe80::1", "a_REDACTED"],
  ["id_2001:db8::7", "id_REDACTED"],
  ["2001:db8::7_x", "REDACTED_x"],
  ["x::1", "xREDACTED"],
  ["v1.2.3.4", "vREDACTED"],
  ["ip1.2.3.4", "ipREDACTED"],
  ["1.2.3.4abc", "REDACTEDabc"],
  // glued to word characters on both sides (issue: compressed IPv6 glued on both sides): an
  // address when what is around `::` is no identifier, and never in part (no group survives)
  ["srv_2001:db8::1_x", "srv_REDACTED_x"],
  ["host2001:db8::1z", "hostREDACTEDz"],
  ["zz2001:db8::8a2e:370:7334zz", "zzREDACTEDzz"],
  ["a_fe80::1_b", "a_REDACTED_b"],
  ["xfe80::1x", "xREDACTEDx"],
  ["x::1y", "xREDACTEDy"],
  ["X2001:DB8::1Y", "XREDACTEDY"],
  ["a_FE80::ABCD:1_b", "a_REDACTED_b"],
  ["id_2001:db8:85a3::8a2e_v", "id_REDACTED_v"],
  ["x2001%3Adb8%3A%3A1y", "xREDACTEDy"],
  ["x%3A%3A1y", "xREDACTEDy"],
  ["xfe80%3A%3A x", "xREDACTED x"],
  ["a_::ffff:c000:280_b", "a_REDACTED_b"],
  // a dotted run longer than an address (tcpdump writes `10.0.0.1.443`)
  ["10.0.0.1.443 > 10.0.0.2.80", "REDACTED.443 > REDACTED.80"],
  ["1.2.3.4.5", "REDACTED.5"],
  ["999.1.1.1", "9REDACTED"],
  // percent-encoded separators
  ["10%2E0%2E0%2E1", "REDACTED"],
  ["10%2e0%2e0%2e1", "REDACTED"],
  ["host%3D10%2E0%2E0%2E1%26x", "host%3DREDACTED%26x"],
  ["2001%3Adb8%3A%3A1", "REDACTED"],
  ["%5B2001:db8::5%5D", "%5BREDACTED%5D"],
  // a zone goes with its address, a number after `%` stays (it may be a percent-encoding)
  ["fe80::1%eth0", "REDACTED"],
  ["fe80::1%1", "REDACTED%1"],
];

const KEPT = [
  "",
  "plain text",
  "Chrome/120.0.6099.109",
  "256.256.256.256",
  "1.2.3",
  "3.14159",
  "00:1a:2b:3c:4d:5e",
  "12:34:56",
  "12:34:56.789",
  "at 10:00 and 12:00:00",
  "2025-01-15T12:34:56.123456Z",
  "6a3c1f0e-2b7d-4c58-9e41-0d8f5b2a7c19",
  "::",
  "use a :: b",
  "std::vector<int>",
  "Foo::bar",
  "crate::module::fn",
  "Interface::Address",
  // a digit before `::` is common in identifiers, never one just after it
  "h2::codec::framed_write",
  "sha256::digest",
  "base64::encode",
  "Vec3::new",
  "u8::MAX",
  "Eigen::Vector3d::Zero",
  "ed25519::Signature",
  // a percent-encoded `::` glued on both sides reads as the plain one does
  "std%3A%3Avector",
  "xfe80%3A%3Ay",
  "ab:cd",
  "16:9",
  "2001:db8",
  "%25",
  "100%",
];

/** `count` texts of address pieces, separators and word characters glued together (seeded) */
function gluedTexts(count: number): string[] {
  const pieces = [
    ...["1", "0", "10", "fe80", "FE80", "db8", "2001", "a", "ab", "ABCD", "ffff", "12345", "1.2.3.4"],
    ...[":", ":", "::", "%3A", "%3a", "%2E", ".", "%25", "%eth0", "%en0", "%1", "%5D", "%5B", "%"],
    ...["x", "zz", "G", "_", "-", "~", "[", "]", " ", "std", "h2", "::ffff:"],
  ];
  let seed = 12;
  const next = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  return Array.from({ length: count }, () =>
    Array.from({ length: 2 + next(9) }, () => pieces[next(pieces.length)]).join(""),
  );
}

describe("redactText", () => {
  it.each(REDACTED_FORMS)("%j → %j", (text, expected) => {
    expect(redactText(text)).toBe(expected);
  });

  it.each(KEPT)("leaves %j alone", (text) => {
    expect(redactText(text)).toBe(text);
  });
});

describe("the address pattern", () => {
  it("is one pattern every engine reads: the portable subset, and RE2 itself", () => {
    expect(checkRegexPattern(ADDRESS_PATTERN)).toBeUndefined();
    expect(() => RE2JS.compile(ADDRESS_PATTERN)).not.toThrow();
  });

  it("matches only what node:net calls an address, so engines and the result pass agree", () => {
    const texts = [...REDACTED_FORMS.map(([t]) => t), ...KEPT, "1:2:3:4:5:6:7:8", "64:ff9b::192.0.2.33"];
    const re = new RegExp(ADDRESS_PATTERN, "g");
    let matches = 0;
    for (const text of texts) {
      for (const m of text.matchAll(re)) {
        const address = m[0]
          .replace(/%2e/gi, ".")
          .replace(/%3a/gi, ":")
          .replace(/%(25)?[0-9A-Za-z_.~-]+$/, "")
          .replace(/(^|[.:])0+(?=\d)/g, "$1");
        expect(isIP(address), `${m[0]} in ${JSON.stringify(text)}`).not.toBe(0);
        matches++;
      }
    }
    expect(matches).toBeGreaterThan(35);
  });

  it("takes at each place the longest match there, so leftmost-longest engines (PostgreSQL) agree", () => {
    const first = new RegExp(ADDRESS_PATTERN, "g");
    const longest = RE2JS.compile(ADDRESS_PATTERN, RE2JS.LONGEST_MATCH);
    // a zone that began with `%3A` or `%2E` once made a longer match than the first one
    const zones = ["fe80::1%3Aeth0", "db8::2001%3aabffffab", "::1%2E1.2.3.4x-G"];
    for (const text of [...REDACTED_FORMS.map(([t]) => t), ...KEPT, ...zones, ...gluedTexts(3000)]) {
      expect(longest.matcher(text).replaceAll("REDACTED"), JSON.stringify(text)).toBe(
        text.replace(first, "REDACTED"),
      );
    }
  });

  it("redacts no address in part: no group next to a match makes an address with it", () => {
    const re = new RegExp(ADDRESS_PATTERN, "g");
    const normal = (s: string) =>
      s
        .replace(/%3a/gi, ":")
        .replace(/%2e/gi, ".")
        .replace(/%(25)?[0-9A-Za-z_.~-]+$/, "");
    for (const text of [...REDACTED_FORMS.map(([t]) => t), ...gluedTexts(3000)]) {
      let kept = 0;
      for (const m of text.matchAll(re)) {
        const before = text.slice(kept, m.index).match(/[0-9A-Fa-f]{1,4}(?::|%3[Aa])$/)?.[0];
        kept = m.index + m[0].length;
        const after = text.slice(kept).match(/^(?::|%3[Aa])[0-9A-Fa-f]{1,4}/)?.[0];
        for (const wider of [before && before + m[0], after && m[0] + after]) {
          if (wider && !m[0].includes("%"))
            expect(isIP(normal(wider)), `${m[0]} in ${JSON.stringify(text)}`).toBe(0);
        }
      }
    }
  });

  it("matches, where IPV6_HINT_PATTERN does not, only as its IPv4 form alone does (PostgreSQL's shortcut)", () => {
    const whole = new RegExp(ADDRESS_PATTERN, "g");
    const ipv4 = new RegExp(IPV4_ADDRESS_PATTERN, "g");
    const ipv4Only = new RegExp(`^(?:${IPV4_ADDRESS_PATTERN})$`);
    const hint = new RegExp(IPV6_HINT_PATTERN);
    const chars = new RegExp(`^${ADDRESS_CHARS}+$`);
    const texts = [...REDACTED_FORMS.map(([t]) => t), ...KEPT, "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:1.2.3.4"];
    let withoutHint = 0;
    for (const text of [...texts, ...gluedTexts(3000)]) {
      // every match that is not an IPv4 address holds the hint (so a text without one has none)
      for (const m of text.matchAll(whole)) {
        if (!ipv4Only.test(m[0])) expect(hint.test(m[0]), `${m[0]} in ${JSON.stringify(text)}`).toBe(true);
        // and every match is a run of ADDRESS_CHARS: texts can be cut between such runs
        expect(m[0]).toMatch(chars);
      }
      if (hint.test(text)) continue;
      withoutHint++;
      expect(text.replace(ipv4, "REDACTED"), JSON.stringify(text)).toBe(text.replace(whole, "REDACTED"));
    }
    expect(withoutHint).toBeGreaterThan(500);
  });

  it("reads a text without `%` as ADDRESS_PATTERN_WITHOUT_PERCENT does (PostgreSQL's smaller automaton)", () => {
    const whole = new RegExp(ADDRESS_PATTERN, "g");
    const lean = new RegExp(ADDRESS_PATTERN_WITHOUT_PERCENT, "g");
    const longest = RE2JS.compile(ADDRESS_PATTERN, RE2JS.LONGEST_MATCH);
    const leanLongest = RE2JS.compile(ADDRESS_PATTERN_WITHOUT_PERCENT, RE2JS.LONGEST_MATCH);
    expect(checkRegexPattern(ADDRESS_PATTERN_WITHOUT_PERCENT)).toBeUndefined();
    // the glued texts with every `%` made a `:` or a `.`, so that the separators stay
    const texts = [...REDACTED_FORMS.map(([t]) => t), ...KEPT, ...gluedTexts(3000)].map((t) =>
      t.replace(/%(?:3[Aa])?/g, ":").replace(/%2[Ee]/g, "."),
    );
    let redacted = 0;
    for (const text of texts) {
      const expected = text.replace(whole, "REDACTED");
      if (expected !== text) redacted++;
      expect(text.replace(lean, "REDACTED"), JSON.stringify(text)).toBe(expected);
      expect(leanLongest.matcher(text).replaceAll("REDACTED"), JSON.stringify(text)).toBe(
        longest.matcher(text).replaceAll("REDACTED"),
      );
    }
    expect(redacted).toBeGreaterThan(1000);
  });

  it("agrees with the direct replacement on text that needs no span splitting", () => {
    const re = new RegExp(ADDRESS_PATTERN, "g");
    for (const [text] of REDACTED_FORMS) expect(redactText(text)).toBe(text.replace(re, "REDACTED"));
  });
});

describe("redactValue", () => {
  it("walks arrays and objects at any depth, keeping keys, numbers, booleans and nulls", () => {
    const value = {
      "10.0.0.1": "10.0.0.2",
      n: 10,
      b: true,
      z: null,
      list: ["::1", { deep: [{ deeper: "from 2001:db8::1" }] }],
    };
    expect(redactValue(value)).toEqual({
      "10.0.0.1": "REDACTED",
      n: 10,
      b: true,
      z: null,
      list: ["REDACTED", { deep: [{ deeper: "from REDACTED" }] }],
    });
    // the input is not changed
    expect(value.list[0]).toBe("::1");
  });

  it("keeps a key named __proto__ as data", () => {
    const row = JSON.parse('{"__proto__": {"ip": "1.2.3.4"}}');
    const [out] = redactRows([row]);
    expect(JSON.stringify(out)).toBe('{"__proto__":{"ip":"REDACTED"}}');
  });
});
