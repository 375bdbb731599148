/**
 * Unicode case folding as BigQuery's CONTAINS_SUBSTR compares text (ZetaSQL folds both sides),
 * written with the engines' lower(): lower() maps one character to one, where folding maps ß and
 * ẞ to ss, a final ς to σ, ſ to s, İ to i + U+0307, ﬁ to fi, ᾀ to ἀι … . Those characters —
 * every one whose folding is not its lowercase, from JavaScript's Unicode tables — are replaced
 * first, in text that is not all ASCII, and lower() does the rest.
 */

/** [character, its folding] for each character lower() alone does not fold (all in the BMP) */
export const FOLDING_SPECIALS: ReadonlyArray<readonly [string, string]> = (() => {
  const pairs: [string, string][] = [];
  for (let c = 0x80; c <= 0xffff; c++) {
    if (c >= 0xd800 && c < 0xe000) continue;
    // dotless ı folds to itself (its uppercase I is the Turkic mapping, not the default one)
    if (c === 0x131) continue;
    const ch = String.fromCharCode(c);
    const lower = ch.toLowerCase();
    const folded = lower.toUpperCase().toLowerCase();
    if (folded !== lower || [...lower].length > 1) pairs.push([ch, folded]);
  }
  return pairs;
})();

/** How a dialect writes what `caseFoldedSql` needs. */
export interface CaseFoldOps {
  /** its one-to-one lowercase function's name */
  lower: string;
  /** SQL that is true when text `x` is all ASCII (nothing to replace) */
  ascii(x: string): string;
  /** a string literal */
  literal(s: string): string;
  /**
   * `x` with each pair's first text replaced by its second, in turn, as one expression over a
   * list of the pairs. Without it, the replacements nest, one call per pair (~18 KB of SQL per
   * side): DuckDB took 150–350 ms to plan that, per query, where it runs the query in 5.
   */
  replaceEach?(x: string, pairs: ReadonlyArray<readonly [string, string]>): string;
}

/** `x` case-folded (see above); `x` is named three times: bound by the caller where long. */
export function caseFoldedSql(x: string, ops: CaseFoldOps): string {
  let replaced = x;
  if (ops.replaceEach) replaced = ops.replaceEach(x, FOLDING_SPECIALS);
  else
    for (const [c, folded] of FOLDING_SPECIALS)
      replaced = `replace(${replaced}, ${ops.literal(c)}, ${ops.literal(folded)})`;
  // a lower() that reads context (ClickHouse's ICU) lowers a word-final Σ to ς, which folds to σ
  const folded = `replace(${ops.lower}(${replaced}), ${ops.literal("ς")}, ${ops.literal("σ")})`;
  return `CASE WHEN ${ops.ascii(x)} THEN ${ops.lower}(${x}) ELSE ${folded} END`;
}
