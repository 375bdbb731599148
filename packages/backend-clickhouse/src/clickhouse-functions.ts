import {
  ADDRESS_PATTERN,
  type CallExpr,
  type CaseFoldOps,
  caseFoldedSql,
  checkedMath,
  checkedWindowCount,
  DEFAULT_FUNCTIONS,
  decimalRounding,
  ESCAPE_MARK_CODE_POINT,
  edgeCall,
  type FunctionEmitter,
  type FunctionTable,
  floatAggregate,
  formatCall,
  inArraySql,
  isPlainPattern,
  JSON_ESCAPE_PATTERN,
  jsonPathKeys,
  literalArg,
  mayMatchEmpty,
  REDACTED,
  REPLACE_MARKS,
  rename,
  type ScalarType,
  type SqlEmitter,
  type SubstringSpelling,
  substrCall,
  unsetGroupAsNull,
} from "@qes/core";
import { bindOnce } from "./clickhouse-bind-once.ts";
import { formatSpec } from "./clickhouse-format.ts";
import { jsonNumbersAsCore, jsonStringAt, jsonStringList, readableJson } from "./clickhouse-json-text.ts";
import { nullArrayWhen, nullForNullArray } from "./clickhouse-null-arrays.ts";
import { orderedArray } from "./clickhouse-ordered-aggregates.ts";
import { clickhouseTimeFunctions } from "./clickhouse-time-functions.ts";
import { checkedInt64, nullableType } from "./clickhouse-types.ts";

/** The dialect members the function table uses (the class would be a circular import). */
export interface ClickhouseEmitter extends SqlEmitter {
  jsonScalar(base: string, keys: string, type: ScalarType): string;
}

const isNative = (call: CallExpr, i: number) => {
  const t = call.args[i]?.type;
  return t?.t === "array" && t.native === true;
};
const elementOf = (call: CallExpr, i: number): ScalarType => {
  const t = call.args[i]?.type;
  return t?.t === "array" ? t.element : "STRING";
};
const isInt64 = (call: CallExpr) => call.type.t === "scalar" && call.type.s === "INT64";
const float = (e: SqlEmitter, x: string, call: CallExpr, i = 0) => e.cast(x, call.args[i]!.type, "FLOAT64");
/** ClickHouse counts and lengths are UInt64: INT64 arithmetic on them must not wrap unsigned. */
const int64 =
  (fn: string): FunctionEmitter =>
  (args, call, e) =>
    `toInt64(${fn}(${args.join(", ")})${e.overOf(call)})`;

/** Arguments that hold JSON text (records, arrays read from events), embedded as JSON. */
function isJsonText(call: CallExpr, i: number): boolean {
  const t = call.args[i]?.type;
  return t?.t === "record" || t?.t === "records" || (t?.t === "array" && !t.native);
}

/** A JSON text value of an expression for building objects and arrays; NULL is `null`. */
function jsonOf(x: string, call: CallExpr, i: number): string {
  const t = call.args[i]?.type;
  if (isJsonText(call, i)) return `ifNull(${x}, 'null')`;
  if (t?.t === "array") return `toJSONString(${x})`;
  if (t?.t === "scalar" && t.s === "TIMESTAMP")
    return `ifNull(toString(toUnixTimestamp64Micro(${x})), 'null')`;
  // if() takes its else branch for a NULL condition: a NULL BOOL would be written `false`
  if (t?.t === "scalar" && t.s === "BOOL") return `multiIf(isNull(${x}), 'null', ${x}, 'true', 'false')`;
  if (t?.t === "null") return "'null'";
  return `ifNull(toJSONString(${x}), 'null')`;
}

/** BigQuery JSONPath → ClickHouse JSON function keys: names as strings, indexes 1-based. */
function jsonKeys(e: SqlEmitter, call: CallExpr): string {
  const path = call.args.length > 1 ? literalArg(call, 1, "a JSONPath") : "$";
  return jsonPathKeys(path)
    .map((k) => (typeof k === "number" ? `${k + 1}` : e.stringLiteral(k)))
    .join(", ");
}

function jsonAt(x: string, keys: string): string {
  return keys ? `${x}, ${keys}` : x;
}

/**
 * A pattern (argument 1) with RE2's default newline behaviour: ClickHouse compiles patterns with
 * `.` matching a newline, which `(?-s)` in front switches off for literals, parameters and
 * patterns the query computes alike.
 */
function re2(e: SqlEmitter, p: string, call: CallExpr): string {
  const arg = call.args[1];
  if (arg?.k === "lit" && typeof arg.value === "string")
    return arg.value.includes(".") ? e.stringLiteral(`(?-s)${arg.value}`) : p;
  // a parameter is bound with the prefix (ClickhouseDialect.bindPattern); a computed pattern gets it here
  if (arg?.k === "param") return p;
  return `concat('(?-s)', ${p})`;
}

/**
 * REGEXP_REPLACE as RE2's GlobalReplace (BigQuery's): an empty match right where the previous
 * match ended is not replaced — `('aaa', 'a*', 'x')` is `x`, where replaceRegexpAll gave `xx`. For
 * a pattern that can match the empty string (mayMatchEmpty) each replacement is marked with the
 * match it replaced (REPLACE_MARKS); the replacements of empty matches glued to the mark ending
 * the previous one are taken out, then the marks and matches.
 */
function globalReplace(e: SqlEmitter, s: string, pattern: string, r: string, call: CallExpr): string {
  const plain = `replaceRegexpAll(${s}, ${pattern}, ${r})`;
  if (!mayMatchEmpty(call)) return plain;
  const { START, MATCH_END, END } = REPLACE_MARKS;
  const lit = (text: string) => e.stringLiteral(text);
  const marked = `replaceRegexpAll(${s}, ${pattern}, concat(${lit(`${START}\\0${MATCH_END}`)}, ${r}, ${lit(END)}))`;
  // replaceRegexpAll steps one byte past an empty match, where RE2 steps one character: `x*`
  // matched again between the bytes of `é`, and its replacement split it. What follows such a
  // replacement's END is the rest of its character, a UTF-8 continuation byte (10xxxxxx), which
  // follows no other: those replacements are taken out, the character whole again
  const untorn = e.once(`splitByString(${lit(START)}, ${marked})`, (pieces) => {
    const after = `position(__rp_p, ${lit(END)}) + ${Buffer.byteLength(END)}`;
    const torn = `bitAnd(reinterpretAsUInt8(substring(__rp_p, ${after}, 1)), 192) = 128`;
    const piece = `if(${torn}, substring(__rp_p, ${after}), concat(${lit(START)}, __rp_p))`;
    return `concat(${pieces}[1], arrayStringConcat(arrayMap(__rp_p -> ${piece}, arrayPopFront(${pieces}))))`;
  });
  const skipped = `replaceRegexpAll(${untorn}, ${lit(`${END}${START}${MATCH_END}[^${END}]*${END}`)}, ${lit(END)})`;
  const unmarked = `replaceAll(replaceRegexpAll(${skipped}, ${lit(`${START}[^${MATCH_END}]*${MATCH_END}`)}, ''), ${lit(END)}, '')`;
  const marks = `[${[START, MATCH_END, END].map(lit).join(", ")}]`;
  const holdsMarks =
    call.args[2]?.k === "lit"
      ? `multiSearchAny(${s}, ${marks})`
      : `(multiSearchAny(${s}, ${marks}) OR multiSearchAny(${r}, ${marks}))`;
  // a NULL text stays NULL (splitByString made it '')
  return `if(isNull(${s}), NULL, if(${holdsMarks}, ${plain}, ${unmarked}))`;
}

/**
 * REGEXP_REPLACE with an empty pattern: the replacement before every character and at the end
 * (BigQuery, DuckDB and PostgreSQL: `('abc', '', 'y')` is `yaybycy`, `('', '', 'y')` is `y`).
 * ClickHouse's replaceRegexpAll returns the text unchanged for an empty pattern, and `(?:)` would
 * step through bytes (`héé` became `yhy\xC3y\xA9y…`): the gaps are taken between characters here.
 * The replacement is read as for an empty match (`\0` is '', `\\` a backslash).
 */
function replaceEveryGap(s: string, r: string): string {
  const text = `assumeNotNull(${s})`;
  const gap = `replaceRegexpOne('', '(?:)', ${r})`;
  // lambda names no compiled column or alias takes (`c`, `i` could be the text's own column)
  const chars = `arrayMap(__gap_i -> substringUTF8(${text}, __gap_i, 1), range(1, toUInt64(lengthUTF8(${text})) + 1))`;
  return `if(isNull(${s}), NULL, concat(${gap}, arrayStringConcat(arrayMap(__gap_c -> concat(__gap_c, ${gap}), ${chars}))))`;
}

/** A literal pattern of plain characters: a substring test, no regular expression needed. */
function plainLiteral(call: CallExpr): boolean {
  const arg = call.args[1];
  return arg?.k === "lit" && typeof arg.value === "string" && isPlainPattern(arg.value);
}

/** Characters, not bytes; lengths are UInt64, made signed to meet INT64 positions. */
const CH_SUBSTRING: SubstringSpelling = {
  length: (s) => `toInt64(lengthUTF8(${s}))`,
  substring: (s, start, count) => `substringUTF8(${s}, ${start}${count === undefined ? "" : `, ${count}`})`,
  edge: (side, s, count) => `${side}UTF8(${s}, ${count})`,
};

/** The function table: every catalogue function in BigQuery's semantics on ClickHouse. */
export function clickhouseFunctions(e: ClickhouseEmitter): FunctionTable {
  return {
    ...DEFAULT_FUNCTIONS,
    ...clickhouseTimeFunctions(e),
    COUNT: (args, call) =>
      `toInt64(${args.length === 0 ? "count()" : `count(${call.agg?.distinct ? "DISTINCT " : ""}${args[0]})`}${e.overOf(call)})`,
    COUNTIF: ([c], call) => `toInt64(countIf(${c})${e.overOf(call)})`,
    // an INT64 sum is added up in Int128 and raises when it leaves INT64 (BigQuery's overflow error)
    SUM: ([x], call) => {
      const distinct = call.agg?.distinct ? "DISTINCT " : "";
      if (isInt64(call)) return checkedInt64(`sum(${distinct}toInt128(${x}))${e.overOf(call)}`);
      return e.floatSum(x!, distinct, e.overOf(call));
    },
    AVG: ([x], call) =>
      floatAggregate(
        `avg(${call.agg?.distinct ? "DISTINCT " : ""}${float(e, x!, call)})${e.overOf(call)}`,
        x!,
        call,
        e,
      ),
    LOGICAL_OR: rename("max"),
    LOGICAL_AND: rename("min"),
    APPROX_COUNT_DISTINCT: ([x], call) => `toInt64(count(DISTINCT ${x})${e.overOf(call)})`,
    ARRAY_AGG: ([x], call) => orderedArray(e, x!, call),
    STRING_AGG: ([x, d], call) => {
      const list = orderedArray(e, x!, { ...call, agg: { ...call.agg, ignoreNulls: true } });
      return `if(empty(${list}), NULL, arrayStringConcat(${list}, ${d ?? "','"}))`;
    },
    __QUANTILE: ([x, k, n]) => {
      const sorted = `arraySort(groupArray(${x}))`;
      return `if(count(${x}) = 0, NULL, ${sorted}[greatest(1, intDiv(${k} * toInt64(count(${x})) + ${n} - 1, ${n}))])`;
    },
    // window functions: ClickHouse ranks are UInt64
    ROW_NUMBER: int64("row_number"),
    RANK: int64("rank"),
    DENSE_RANK: int64("dense_rank"),
    // ntile takes an unsigned bucket count
    NTILE: ([n], call) =>
      checkedWindowCount(
        n!,
        call,
        e,
        (at) => `toInt64(ntile(toUInt64(assumeNotNull(${at})))${e.overOf(call)})`,
      ),
    PERCENT_RANK: rename("percent_rank"),
    CUME_DIST: rename("cume_dist"),
    // lagInFrame/leadInFrame read within the frame: the whole partition, ordered.
    LAG: (args, call) => shift(e, "lagInFrame", args, call),
    LEAD: (args, call) => shift(e, "leadInFrame", args, call),
    // first_value/last_value skip NULLs unless told otherwise
    FIRST_VALUE: ([x], call) => `first_value(${x})${call.ignoreNulls ? "" : " RESPECT NULLS"}`,
    LAST_VALUE: ([x], call) => `last_value(${x})${call.ignoreNulls ? "" : " RESPECT NULLS"}`,
    // nth_value has no IGNORE NULLS: the n-th of the frame's values, which groupArray keeps non-NULL
    NTH_VALUE: ([x, n], call) =>
      checkedWindowCount(n!, call, e, (at) =>
        call.ignoreNulls
          ? `arrayElementOrNull(groupArray(${x})${e.overOf(call)}, ${at})`
          : `nth_value(${x}, toUInt64(assumeNotNull(${at})))${e.overOf(call)}`,
      ),
    NULLIF: rename("nullIf"),
    IF: ([c, a, b]) => `if(${c}, ${a}, ${b})`,
    LOWER: rename("lowerUTF8"),
    UPPER: rename("upperUTF8"),
    LENGTH: int64("lengthUTF8"),
    CHAR_LENGTH: int64("lengthUTF8"),
    STARTS_WITH: rename("startsWith"),
    ENDS_WITH: rename("endsWith"),
    // BigQuery compares the case-folded texts (case-folding.ts)
    CONTAINS_SUBSTR: ([a, b]) => {
      const ops: CaseFoldOps = {
        lower: "lowerUTF8",
        ascii: (x) => `length(${x}) = lengthUTF8(${x})`,
        literal: (s) => e.stringLiteral(s),
        replaceEach: (x, pairs) =>
          `arrayFold((__cf_acc, __cf_p) -> replaceAll(__cf_acc, __cf_p.1, __cf_p.2), ` +
          `[${pairs.map(([c, f]) => `(${e.stringLiteral(c)}, ${e.stringLiteral(f)})`).join(", ")}], toString(${x}))`,
      };
      return `(positionUTF8(${caseFoldedSql(a!, ops)}, ${caseFoldedSql(b!, ops)}) > 0)`;
    },
    SUBSTR: (args, call) => substrCall(args, call, e, CH_SUBSTRING),
    SUBSTRING: (args, call) => substrCall(args, call, e, CH_SUBSTRING),
    COALESCE: (args, call) => coalesceSql(e, args, call),
    IFNULL: (args, call) => coalesceSql(e, args, call),
    TRIM: ([s, c], call) => (c === undefined ? `trimBoth(${s})` : trimChars("both", s!, c, call)),
    LTRIM: ([s, c], call) => (c === undefined ? `trimLeft(${s})` : trimChars("left", s!, c, call)),
    RTRIM: ([s, c], call) => (c === undefined ? `trimRight(${s})` : trimChars("right", s!, c, call)),
    REPLACE: rename("replaceAll"),
    STRPOS: int64("positionUTF8"),
    LEFT: (args, call) => edgeCall("left", args, call, e, CH_SUBSTRING),
    RIGHT: (args, call) => edgeCall("right", args, call, e, CH_SUBSTRING),
    REVERSE: rename("reverseUTF8"),
    REGEXP_CONTAINS: ([s, p], call) =>
      plainLiteral(call) ? `(position(${s}, ${p}) > 0)` : `match(${s}, ${re2(e, p!, call)})`,
    // the first group (or the whole match); NULL when the pattern does not match
    REGEXP_EXTRACT: ([s, p], call) => {
      const re = re2(e, p!, call);
      return `if(match(${s}, ${re}), ${unsetGroupAsNull(`extract(${s}, ${re})`, call)}, NULL)`;
    },
    REGEXP_REPLACE: ([s, p, r], call) => {
      const replaced = globalReplace(e, s!, re2(e, p!, call), r!, call);
      const arg = call.args[1];
      if (arg?.k === "lit" && typeof arg.value === "string")
        return arg.value === "" ? replaceEveryGap(s!, r!) : replaced;
      return `if(${p} = '', ${replaceEveryGap(s!, r!)}, ${replaced})`;
    },
    // BigQuery: SPLIT of NULL is NULL; ClickHouse arrays cannot be NULL, so it is empty
    // (clickhouse-null-arrays.ts makes the NULL show where it is read)
    // an empty delimiter splits into characters (BigQuery), where splitByString gives bytes
    SPLIT: ([s, d]) => {
      const text = `assumeNotNull(${s})`;
      const chars = `arrayMap(i -> substringUTF8(${text}, i, 1), range(1, toUInt64(lengthUTF8(${text})) + 1))`;
      const delim = d ?? "','";
      return `if(isNull(${s}) OR isNull(${delim}), [], if(${delim} = '', if(${text} = '', [''], ${chars}), splitByString(assumeNotNull(${delim}), ${text})))`;
    },
    ROUND: decimalRounding("round"),
    TRUNC: decimalRounding("trunc"),
    // abs of an Int64 is UInt64: -2^63 gives 2^63, which INT64 cannot hold (BigQuery raises)
    ABS: (args, call, e) =>
      checkedMath.abs((x) => (isInt64(call) ? checkedInt64(`abs(${x})`) : `abs(${x})`))(args, call, e),
    DIV: ([a, b]) => `intDiv(${a}, ${e.divisor(`(${b})`, `(${a})`)})`,
    SIGN: ([x], call) => {
      const sign = `CAST(sign(${x}) AS ${e.typeName(call.type.t === "scalar" ? call.type.s : "INT64")})`;
      // SIGN(NaN) is NaN (BigQuery); ClickHouse's sign answers 1
      return call.type.t === "scalar" && call.type.s === "FLOAT64" ? `if(isNaN(${x}), ${x}, ${sign})` : sign;
    },
    LN: checkedMath.log((x) => `log(${x})`),
    LOG10: checkedMath.log((x) => `log10(${x})`),
    SQRT: checkedMath.sqrt((x) => `sqrt(${x})`),
    EXP: checkedMath.exp((x) => `exp(${x})`),
    POW: checkedMath.pow((x, y) => `pow(${x}, ${y})`),
    POWER: checkedMath.pow((x, y) => `pow(${x}, ${y})`),
    ARRAY_LENGTH: ([a], call) =>
      isNative(call, 0)
        ? nullForNullArray(e, call.args[0]!, `toInt64(length(${a}))`)
        : `toInt64(JSONLength(${readableJson(a!)}))`,
    ARRAY_TO_STRING: ([a, d], call) => {
      // elements other than text are joined as CAST(… AS STRING) spells them (`1e+21`, not
      // ClickHouse's `1e21`), read typed from JSON text
      const element = elementOf(call, 0);
      const texts = (list: string) =>
        element === "STRING"
          ? list
          : `arrayMap(x -> ${e.cast("x", { t: "scalar", s: element }, "STRING")}, ${list})`;
      if (!isNative(call, 0)) {
        const json = readableJson(a!);
        const list =
          element === "STRING"
            ? jsonStringList(json)
            : `JSONExtract(ifNull(${json}, ''), ${e.stringLiteral(`Array(${nullableType(element)})`)})`;
        // a missing or null array (NULL JSON text) joins to NULL, an empty one to ''
        return `if(isNull(${a}), NULL, arrayStringConcat(arrayFilter(x -> isNotNull(x), ${texts(list)}), ${d}))`;
      }
      return nullForNullArray(
        e,
        call.args[0]!,
        `arrayStringConcat(arrayFilter(x -> isNotNull(x), ${texts(a!)}), ${d})`,
      );
    },
    // the JSON text once: each names it many times, so JSON_VALUE of JSON_VALUE multiplied
    JSON_VALUE: ([x], call) => bindOnce(x!, (j) => jsonValue(e, j, call)),
    JSON_EXTRACT_SCALAR: ([x], call) => bindOnce(x!, (j) => jsonValue(e, j, call)),
    JSON_QUERY: ([x], call) => bindOnce(x!, (j) => jsonQuery(e, j, call)),
    JSON_EXTRACT: ([x], call) => bindOnce(x!, (j) => jsonQuery(e, j, call)),
    FORMAT: (args, call) => formatCall(args, call, e, (x, type, s) => formatSpec(e, x, type, s)),
    __ARRAY_AT: ([a, i], call) => {
      const t = call.args[0]!.type;
      if (t.t === "array" && t.native) return `if(${i} >= 0, arrayElementOrNull(${a}, ${i} + 1), NULL)`;
      if (t.t === "records")
        return `if(${i} >= 0, nullIf(JSONExtractRaw(${readableJson(a!)}, ${i} + 1), ''), NULL)`;
      return `if(${i} >= 0, ${e.jsonScalar(a!, `${i} + 1`, elementOf(call, 0))}, NULL)`;
    },
    __ARRAY_CONTAINS: ([a, x], call) => {
      const element = elementOf(call, 0);
      const list = isNative(call, 0)
        ? a
        : element === "STRING"
          ? jsonStringList(readableJson(a!))
          : `JSONExtract(ifNull(${readableJson(a!)}, ''), ${e.stringLiteral(`Array(${nullableType(element)})`)})`;
      return inArraySql(list!, x!, {
        length: (l) => `length(${l})`,
        contains: (l, v) => `has(${l}, ${v})`,
        holdsNull: (l) => `arrayExists(__in_e -> isNull(__in_e), ${l})`,
      });
    },
    __ARRAY_TO_JSON: ([a], call) => {
      if (elementOf(call, 0) === "TIMESTAMP")
        return `toJSONString(arrayMap(x -> toUnixTimestamp64Micro(x), ${a}))`;
      // JSON has no NaN or infinities (toJSONString writes them null): the strings BigQuery's
      // JSON API writes, as a FLOAT64 leaves on the wire
      if (elementOf(call, 0) === "FLOAT64")
        return `concat('[', arrayStringConcat(arrayMap(x -> multiIf(isNull(x), 'null', isNaN(x), '"NaN"', isInfinite(x), if(x > 0, '"Infinity"', '"-Infinity"'), toJSONString(x)), ${a}), ','), ']')`;
      return `toJSONString(${a})`;
    },
    __ARRAY: (args, call) => {
      const element = call.type.t === "array" ? call.type.element : "STRING";
      return `CAST([${args.join(", ")}] AS Array(${nullableType(element)}))`;
    },
    __JSON_OBJECT: (args, call) => {
      const members = [];
      for (let i = 0; i + 1 < args.length; i += 2)
        members.push(`concat(toJSONString(${args[i]}), ':', ${jsonOf(args[i + 1]!, call, i + 1)})`);
      return members.length ? `concat('{', ${members.join(", ',', ")}, '}')` : "'{}'";
    },
    // RE2 reads the address pattern as written (it has no bare dot); JSON text is redacted as text
    // (its strings hold every address), engine arrays element by element
    __REDACT_ADDRESSES: ([v], call) => {
      const replace = (text: string) =>
        `replaceRegexpAll(${text}, ${e.stringLiteral(ADDRESS_PATTERN)}, ${e.stringLiteral(REDACTED)})`;
      if (isNative(call, 0)) return `arrayMap(__s -> ${replace("__s")}, ${v})`;
      if (!isJsonText(call, 0)) return replace(v!);
      // JSON text: escapes marked so the pattern meets the decoded text's boundaries (json-text-escapes.ts)
      const mark = `char(${ESCAPE_MARK_CODE_POINT})`;
      const marked = `replaceRegexpAll(${v}, ${e.stringLiteral(JSON_ESCAPE_PATTERN)}, concat(${e.stringLiteral("\\1")}, ${mark}))`;
      return `replaceAll(${replace(marked)}, ${mark}, '')`;
    },
    __JSON_ARRAY: (args, call) =>
      args.length ? `concat('[', ${args.map((a, i) => jsonOf(a, call, i)).join(", ',', ")}, ']')` : "'[]'",
  };
}

/** LAG/LEAD: NULL (not the type's default) past the partition's edge; the frame is the partition. */
function shift(e: SqlEmitter, fn: string, [x, offset, dflt]: string[], call: CallExpr): string {
  const write = (at: string | undefined) => {
    const parts = [`toNullable(${x})`];
    // lagInFrame refuses a Nullable offset (a bound parameter), checked not NULL by then
    if (at !== undefined) parts.push(at === offset ? at : `assumeNotNull(${at})`);
    if (dflt !== undefined) parts.push(dflt);
    const over = call.over
      ? e.overOf({
          ...call,
          over: { ...call.over, frame: "ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING" },
        })
      : "";
    return `${fn}(${parts.join(", ")})${over}`;
  };
  return offset === undefined ? write(undefined) : checkedWindowCount(offset, call, e, write);
}

/**
 * ClickHouse's JSON functions read an index of an object as its member at that position
 * (`JSONExtract('{"a":1}', 1)` is 1): each index step of the path must meet an array, as in
 * BigQuery's JSONPath, where `$[0]` of an object is NULL.
 */
function indexStepsMeetArrays(e: SqlEmitter, x: string, call: CallExpr): string {
  const path = call.args.length > 1 ? literalArg(call, 1, "a JSONPath") : "$";
  const keys = jsonPathKeys(path);
  const emitted = keys.map((k) => (typeof k === "number" ? `${k + 1}` : e.stringLiteral(k)));
  const checks = keys.flatMap((k, i) =>
    typeof k === "number" ? [`JSONType(${jsonAt(x, emitted.slice(0, i).join(", "))}) = 'Array'`] : [],
  );
  return checks.map((c) => ` AND ${c}`).join("");
}

function jsonValue(e: SqlEmitter, text: string, call: CallExpr): string {
  const x = readableJson(text);
  const at = jsonAt(x, jsonKeys(e, call));
  // a number as CAST(… AS STRING) spells the INT64 or FLOAT64 it is (DESIGN.md §3), as DuckDB
  // and PostgreSQL do (postgresJsonNumberText): ClickHouse wrote 1e+21 as 1e21, -0.0 as -0
  return `if(isValidJSON(${x})${indexStepsMeetArrays(e, x, call)} AND JSONType(${at}) NOT IN ('Object', 'Array', 'Null'), ${jsonStringAt(at)}, NULL)`;
}

function jsonQuery(e: SqlEmitter, text: string, call: CallExpr): string {
  const x = readableJson(text);
  const at = jsonAt(x, jsonKeys(e, call));
  // numbers as CAST AS STRING spells them, as DuckDB and PostgreSQL do (ClickHouse wrote 1e21, -0)
  return `if(isValidJSON(${x})${indexStepsMeetArrays(e, x, call)}, nullIf(${jsonNumbersAsCore(`JSONExtractRaw(${at})`)}, ''), NULL)`;
}

/**
 * TRIM, LTRIM and RTRIM of the characters of `c`: trimBoth and its kin take bytes, so a character
 * of several UTF-8 bytes trimmed any character sharing its last or first byte, leaving half a
 * character (TRIM('ß', '😀x') was '\xC3'). Characters of ASCII only (bytes no UTF-8 sequence
 * holds) stay with them; other characters are compared as UTF-8 characters.
 */
function trimChars(side: "both" | "left" | "right", s: string, c: string, call: CallExpr): string {
  const fast = side === "both" ? "trimBoth" : side === "left" ? "trimLeft" : "trimRight";
  const chars = call.args[1];
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII is the range \x00-\x7F
  if (chars?.k === "lit" && typeof chars.value === "string" && /^[\x00-\x7f]*$/.test(chars.value))
    return `${fast}(${s}, ${c})`;
  return bindOnce(s, (text) =>
    bindOnce(c, (set) => {
      const utf8 = (x: string) => `arrayMap(i -> substringUTF8(${x}, i, 1), range(1, lengthUTF8(${x}) + 1))`;
      const kept = `(ch -> NOT has(${utf8(`ifNull(${set}, '')`)}, ch))`;
      const t = `ifNull(${text}, '')`;
      const first = `arrayFirstIndex(${kept}, ${utf8(t)})`;
      const last = `arrayLastIndex(${kept}, ${utf8(t)})`;
      const trimmed =
        side === "left"
          ? `substringUTF8(${t}, ${first})`
          : side === "right"
            ? `substringUTF8(${t}, 1, ${last})`
            : `substringUTF8(${t}, ${first}, ${last} - ${first} + 1)`;
      return `if(isNull(${text}) OR isNull(${set}), NULL, if(${first} = 0, '', ${trimmed}))`;
    }),
  );
}

/**
 * COALESCE and IFNULL, evaluating no argument past the first non-NULL one. Of arrays, which cannot be NULL here (clickhouse-null-arrays.ts), the first
 * argument that is not BigQuery's NULL array by nullArrayWhen: coalesce() took IF(c, [1], NULL)'s
 * `[]` as a value.
 */
function coalesceSql(e: SqlEmitter, args: string[], call: CallExpr): string {
  const t = call.type;
  // BigQuery evaluates no argument after the first non-NULL one; coalesce() evaluates them all
  // (COALESCE(1, ABS(-2^63)) raised the overflow), multiIf() only those it reaches
  if (!(t.t === "array" && t.native))
    return args.length === 1
      ? args[0]!
      : `multiIf(${args
          .slice(0, -1)
          .map((a) => `isNotNull(${a}), ${a}`)
          .join(", ")}, ${args.at(-1)})`;
  let out = `CAST([] AS Array(${nullableType(t.element)}))`;
  for (let i = args.length - 1; i >= 0; i--) {
    const a = call.args[i]!;
    if (a.k === "lit" && a.value === null) continue;
    const when = nullArrayWhen(e, a);
    out = when === undefined ? args[i]! : `if(${when}, ${out}, ${args[i]})`;
  }
  return out;
}
