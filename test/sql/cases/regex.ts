import { REST, type SqlCase } from "./case.ts";

// Regular expressions: RE2 semantics (BigQuery's) for the subset every engine expresses
// (DESIGN.md §3); the rest is refused before any engine runs.

export const regexCases: SqlCase[] = [
  // ClickHouse's replaceRegexpAll returned the text unchanged for an empty pattern (and `(?:)` steps
  // through bytes, splitting é into two broken halves)
  {
    name: "REGEXP_REPLACE with an empty pattern puts the replacement in every gap",
    rule: "BigQuery REGEXP_REPLACE (RE2 GlobalReplace): an empty pattern matches before every character and at the end; \\0 is the empty match; NULL text or replacement is NULL",
    sql: String.raw`select regexp_replace('abc', '', 'y') as a, regexp_replace('héé', '', 'y') as b, regexp_replace('a😀b', '', '|') as c, regexp_replace('', '', 'y') as d, regexp_replace('a.b', '', '<\\0>') as e, regexp_replace('abc', '', '') as f, regexp_replace(cast(null as string), '', 'y') as g, regexp_replace('ab', '', cast(null as string)) as h`,
    expect: [
      { a: "yaybycy", b: "yhyéyéy", c: "|a|😀|b|", d: "y", e: "<>a<>.<>b<>", f: "abc", g: null, h: null },
    ],
  },
  {
    name: "REGEXP_REPLACE with an empty pattern the query computes",
    rule: "BigQuery REGEXP_REPLACE: an empty pattern matches before every character and at the end, wherever the pattern comes from",
    sql: `select id, regexp_replace(id, substr(id, 5), '-') as a, regexp_replace(id, substr(id, 2, 1), '-') as b, regexp_replace('hé', substr(id, 5), '-') as c from ${REST} order by id`,
    expect: [
      { id: "t01", a: "-t-0-1-", b: "t-1", c: "-h-é-" },
      { id: "t02", a: "-t-0-2-", b: "t-2", c: "-h-é-" },
      { id: "t03", a: "-t-0-3-", b: "t-3", c: "-h-é-" },
    ],
  },
  {
    name: "REGEXP_REPLACE with an empty pattern bound as a parameter",
    rule: "BigQuery REGEXP_REPLACE: an empty pattern matches before every character and at the end; a parameter is bound as the pattern it is",
    sql: "select regexp_replace('héllo', @p, '.') as a, regexp_contains('x', @p) as b",
    params: { p: { kind: "string", value: "" } },
    expect: [{ a: ".h.é.l.l.o.", b: true }],
  },
  {
    name: "REGEXP_REPLACE with \\0, the whole match",
    rule: "BigQuery REGEXP_REPLACE: \\0 in the replacement is the whole match, \\1 a group, \\\\ a backslash (PostgreSQL wrote \\0 as it is)",
    sql: String.raw`select regexp_replace('abc', 'b', '\\0\\0') as a, regexp_replace('abc', '(b)', '\\1-\\\\0') as b`,
    expect: [{ a: "abbc", b: String.raw`ab-\0c` }],
  },
  {
    name: "a dot does not match a newline (RE2)",
    rule: "RE2 syntax: . matches any character except newline, unless (?s)",
    sql: `select regexp_contains('a\\nb', 'a.b') as dot, regexp_contains('a\\nb', 'a[^x]b') as class, regexp_contains('a\\nb', r'a\\sb') as space`,
    expect: [{ dot: false, class: true, space: true }],
  },
  {
    name: "a pattern computed at run time keeps RE2's dot",
    rule: "RE2 syntax: . does not match newline, for a pattern from an expression or a column as for a literal",
    sql: `select regexp_contains('a\\nb', concat('a', '.', 'b')) as dot, regexp_contains('a\\nb', concat('a', r'\\.', 'b')) as escaped, regexp_contains('a.b', concat('a', r'\\.', 'b')) as literal_dot, regexp_contains('a\\nb', concat('a[.', ']b')) as class_dot, regexp_contains('a\\nb', concat('a[^', 'x]b')) as class, regexp_contains('anything', concat('', '')) as empty, regexp_contains('a', cast(null as string)) as null_pattern`,
    expect: [
      {
        dot: false,
        escaped: false,
        literal_dot: true,
        class_dot: false,
        class: true,
        empty: true,
        null_pattern: null,
      },
    ],
  },
  {
    name: "a pattern read from a column keeps RE2's dot, escapes and classes",
    rule: "RE2 syntax: the pattern's meaning does not depend on where it comes from",
    sql: `with t as (select 'a\\nb' as x, 'a.b' as p union all select 'a.b', r'a\\.b' union all select 'a\\nb', 'a[^x]b' union all select 'A.B', '(?i)a[.]b') select x, p, regexp_contains(x, p) as m from t`,
    expect: [
      { x: "a\nb", p: "a.b", m: false },
      { x: "a.b", p: "a\\.b", m: true },
      { x: "a\nb", p: "a[^x]b", m: true },
      { x: "A.B", p: "(?i)a[.]b", m: true },
    ],
  },
  {
    name: "word boundaries in a pattern computed at run time or read from a column",
    rule: "RE2 syntax: \\b is a word boundary and \\B its negation, wherever the pattern comes from",
    sql: `with t as (select 1 as n, 'cat scatter' as x, r'\\bcat\\b' as p union all select 2, 'scatter', r'\\bcat' union all select 3, 'scatter', r'\\Bcat\\B') select n, p, regexp_contains(x, p) as m, regexp_contains(x, concat(r'\\b', 'sca')) as computed, regexp_contains(x, concat(r'\\B', 'cat')) as inside from t order by n`,
    expect: [
      { n: 1, p: "\\bcat\\b", m: true, computed: true, inside: true },
      { n: 2, p: "\\bcat", m: false, computed: true, inside: true },
      { n: 3, p: "\\Bcat\\B", m: true, computed: true, inside: true },
    ],
  },
  {
    name: "word boundaries are ASCII's: a letter like é is not a word character, literal or computed",
    rule: "RE2 syntax: \\b is a boundary between \\w ([0-9A-Za-z_]) and \\W; é and 😀 are \\W",
    sql: `select regexp_replace(x, r'\\b', '|') as b, regexp_contains(x, concat(r'\\b', 'caf')) as computed, regexp_contains('é', concat(r'\\b', 'é')) as accented, regexp_contains('é', r'\\Bé') as inside, regexp_contains(' é', concat(r' \\B', 'é')) as inside_computed from unnest(['é😀 ab café']) x`,
    expect: [{ b: "é😀 |ab| |caf|é", computed: true, accented: false, inside: true, inside_computed: true }],
  },
  // DuckDB's search tried the bytes inside é for `\B` and put the replacement between them
  // (`('aé', r'\B', '-')` gave `a\xC3-\xA9-`, invalid UTF-8)
  {
    name: "REGEXP_REPLACE of \\B puts its replacement between characters, never inside one",
    rule: "RE2 syntax: \\B holds between two \\W characters; é, € and 😀 are one character each, and no replacement splits one",
    sql: String.raw`select regexp_replace(x, r'\B', '-') as b, regexp_replace(x, concat(r'\B', ''), '|') as computed, regexp_replace(x, r'\B', r'<\0>') as g from unnest(['éa', 'aé', 'a€b😀', 'é😀 ab café', '', cast(null as string)]) x with offset o order by o`,
    expect: [
      { b: "-éa", computed: "|éa", g: "<>éa" },
      { b: "aé-", computed: "aé|", g: "aé<>" },
      { b: "a€b😀-", computed: "a€b😀|", g: "a€b😀<>" },
      { b: "-é-😀- a-b c-a-fé-", computed: "|é|😀| a|b c|a|fé|", g: "<>é<>😀<> a<>b c<>a<>fé<>" },
      { b: "-", computed: "|", g: "<>" },
      { b: null, computed: null, g: null },
    ],
  },
  {
    name: "REGEXP_REPLACE of a pattern that matches empty steps over whole characters, not bytes",
    rule: "RE2 GlobalReplace: after an empty match the search resumes one character on; é and 😀 are one character each (ClickHouse stepped one byte and split them)",
    sql: `select regexp_replace(x, 'x*', '-') as r, regexp_replace(x, 'l*', r'<\\0>') as g, regexp_replace(x, '[a-z]*', '.') as w from unnest(['héllo😀', 'aé😀x', '', cast(null as string)]) x`,
    expect: [
      { r: "-h-é-l-l-o-😀-", g: "<>h<>é<ll>o<>😀<>", w: ".é.😀." },
      { r: "-a-é-😀-", g: "<>a<>é<>😀<>x<>", w: ".é.😀." },
      { r: "-", g: "<>", w: "." },
      { r: null, g: null, w: null },
    ],
  },
  {
    name: "anchors match only at the ends of the text",
    rule: "RE2 syntax: ^ and $ are text anchors without (?m)",
    sql: `select regexp_contains('x\\nab', '^ab') as start, regexp_contains('ab\\nx', 'ab$') as finish, regexp_contains('ab', '^ab$') as whole`,
    expect: [{ start: false, finish: false, whole: true }],
  },
  {
    name: "a leading (?i) makes the match case-insensitive",
    rule: "RE2 flags: (?i)",
    sql: `select regexp_contains('GET /Rest/v1', '(?i)/rest/') as i, regexp_contains('GET /Rest/v1', '/rest/') as plain`,
    expect: [{ i: true, plain: false }],
  },
  {
    name: "classes, escapes and lazy quantifiers",
    rule: "RE2 syntax: \\d \\w [[:alpha:]] {n,m} and lazy *?",
    sql: `select regexp_extract('id=abc123;', r'(\\d{2,3})') as digits, regexp_extract('<a><b>', '<(.*?)>') as lazy, regexp_contains('x_9', r'^\\w+$') as word, regexp_contains('abc', '^[[:alpha:]]+$') as alpha`,
    expect: [{ digits: "123", lazy: "a", word: true, alpha: true }],
  },
  {
    name: "REGEXP_REPLACE with a group reference in the replacement",
    rule: "BigQuery REGEXP_REPLACE: \\1 in the replacement; every match replaced",
    sql: `select regexp_replace('a1b22c333', r'(\\d+)', r'<\\1>') as r`,
    expect: [{ r: "a<1>b<22>c<333>" }],
  },
  {
    name: "a backreference is refused",
    rule: "DESIGN.md §3: RE2 has no backreferences; refused before any engine runs",
    sql: `select regexp_contains('aa', r'(a)\\1') as x`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "a lookahead is refused",
    rule: "DESIGN.md §3: RE2 has no lookaround",
    sql: `select regexp_contains('ab', 'a(?=b)') as x`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "an inline flag other than a leading (?i) is refused",
    rule: "DESIGN.md §3: only the subset every engine reads alike",
    sql: `select regexp_contains('ab', 'a(?s).b') as x`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "a unicode class is refused",
    rule: "DESIGN.md §3: \\p{…} is not in PostgreSQL's AREs",
    sql: `select regexp_contains('ab', r'\\p{L}') as x`,
    expect: { error: "sql_invalid" },
  },
];
