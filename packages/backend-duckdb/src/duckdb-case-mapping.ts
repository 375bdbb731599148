/**
 * BigQuery's UPPER and LOWER are ICU's full case mappings in the root locale (ZetaSQL's
 * UpperUtf8/LowerUtf8: icu::CaseMap): ß is SS, ﬁ FI, ŉ ʼN, a final Σ lowers to ς and İ to i̇.
 * DuckDB maps one character to one (its upper('ß') was ẞ, upper('ﬁ') ﬁ), so the characters whose
 * mapping is longer are replaced first and the engine's own function does the rest.
 */

/**
 * Every character whose uppercase is several characters (Unicode's SpecialCasing.txt,
 * unconditional mappings), as JavaScript's toUpperCase applies them: all are in the BMP.
 */
const MULTI_CHARACTER_UPPER: ReadonlyArray<readonly [string, string]> = (() => {
  const pairs: [string, string][] = [];
  for (let c = 0; c <= 0xffff; c++) {
    if (c >= 0xd800 && c < 0xe000) continue;
    const ch = String.fromCharCode(c);
    const upper = ch.toUpperCase();
    if ([...upper].length > 1) pairs.push([ch, upper]);
  }
  return pairs;
})();

/** a RE2 class of those characters: rows without one take DuckDB's upper() alone */
const UPPER_SPECIALS = `[${MULTI_CHARACTER_UPPER.map(([c]) => c).join("")}]`;

/** UPPER(x) as ICU's root locale writes it; `literal` writes a DuckDB string literal */
export function duckdbUpper(x: string, literal: (s: string) => string): string {
  let replaced = x;
  for (const [c, upper] of MULTI_CHARACTER_UPPER)
    replaced = `replace(${replaced}, ${literal(c)}, ${literal(upper)})`;
  return `CASE WHEN regexp_matches(${x}, ${literal(UPPER_SPECIALS)}) THEN upper(${replaced}) ELSE upper(${x}) END`;
}

/**
 * LOWER(x) as ICU's root locale writes it: İ is i + U+0307 (its one multi-character lowercase),
 * and a Σ after a letter and before none is the final ς (SpecialCasing's Final_Sigma, with
 * "cased letter" read as any letter).
 */
export function duckdbLower(x: string, literal: (s: string) => string): string {
  const dotted = `replace(${x}, ${literal("İ")}, ${literal("i\u0307")})`;
  const finalSigma = `regexp_replace(${dotted}, ${literal("(\\p{L})Σ(\\P{L}|$)")}, ${literal("\\1ς\\2")}, 'g')`;
  return `CASE WHEN contains(${x}, ${literal("Σ")}) OR contains(${x}, ${literal("İ")}) THEN lower(${finalSigma}) ELSE lower(${x}) END`;
}
