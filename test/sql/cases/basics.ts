import { AUTH, col, EDGE, PG, REST, RT, type SqlCase, STORAGE, us } from "./case.ts";

// Values, lexical structure, WHERE, ORDER BY, LIMIT, DISTINCT: BigQuery's "Query syntax" and
// "Lexical structure and syntax" pages, and the wire values of DESIGN.md §4.

const ALPHA_EDGE = ["e01", "e02", "e03", "e04", "e05", "e09"];

export const basicCases: SqlCase[] = [
  // ---------------------------------------------------------------- values and wire format
  {
    name: "selects top-level columns of one event",
    rule: "DESIGN.md §3: top-level keys are columns; id and event_message are STRING",
    sql: `select id, event_message from ${REST} where id = 't01'`,
    expect: [{ id: "t01", event_message: "Attempting to connect to the database..." }],
  },
  {
    name: "timestamp is a TIMESTAMP sent as integer microseconds",
    rule: "DESIGN.md §3 (timestamp is TIMESTAMP) and §4 (TIMESTAMP → integer unix µs)",
    sql: `select id, timestamp from ${EDGE} where id = 'e04'`,
    expect: [{ id: "e04", timestamp: us("2025-01-15T10:59:59.999999Z") }],
  },
  {
    name: "ISO timestamps keep their microseconds",
    rule: "DESIGN.md §3: timestamp is ISO 8601, kept to the microsecond; §4 wire µs",
    sql: `select id, timestamp from ${EDGE} where id in ('e02', 'e12')`,
    expect: [
      { id: "e02", timestamp: us("2025-01-15T10:00:00.000001Z") },
      { id: "e12", timestamp: us("2025-01-15T09:00:00.123456Z") },
    ],
  },
  {
    name: "an integer microsecond timestamp is taken as is",
    rule: "DESIGN.md §3: timestamp may be integer unix microseconds",
    sql: `select timestamp from ${STORAGE} where id = 's08'`,
    expect: [{ timestamp: 1736935620000000 }],
  },
  {
    name: "metadata is a repeated record of one element",
    rule: "DESIGN.md §3 (every nested object is a REPEATED RECORD of one) and §4 (records → arrays of objects)",
    sql: `select metadata from ${REST} where id = 't03'`,
    expect: [{ metadata: [{ host: "db-beta" }] }],
  },
  {
    name: "an event without metadata has an empty repeated record",
    rule: "BigQuery: a NULL or missing REPEATED field is returned as []; DESIGN.md §4",
    sql: `select id, metadata from ${STORAGE} where id = 's07'`,
    expect: [{ id: "s07", metadata: [] }],
  },
  {
    name: "nested objects are one-element arrays and scalar arrays stay arrays",
    rule: "DESIGN.md §3–§4: nested object → [{…}], array of scalars → array",
    sql: `select m.context from ${RT} cross join unnest(metadata) as m where id = 'r02'`,
    expect: [
      {
        context: [
          {
            application: "realtime",
            domain: ["elixir", "phoenix"],
            pid: "<0.123.0>",
            time: 1736935260000000,
            vm: [{ node: "realtime@10.0.0.1" }],
          },
        ],
      },
    ],
  },
  {
    name: "an empty array of scalars is []",
    rule: "DESIGN.md §4: arrays stay arrays; BigQuery returns an empty ARRAY as []",
    sql: `select m.context from ${RT} cross join unnest(metadata) as m where id = 'r04'`,
    expect: [
      {
        context: [
          {
            application: "realtime",
            domain: [],
            pid: "<0.456.0>",
            time: 1736935380000000,
            vm: [{ node: "realtime@10.0.0.2" }],
          },
        ],
      },
    ],
  },
  {
    name: "an array of objects keeps all its elements in order",
    rule: "DESIGN.md §3: an array of objects is a repeated record of N",
    sql: `select m.context from ${STORAGE} cross join unnest(metadata) as m where id = 's03'`,
    expect: [
      {
        context: [
          { host: "storage-2", pid: 12 },
          { host: "storage-2", pid: 13 },
        ],
      },
    ],
  },
  {
    name: "an element of UNNEST over records is a STRUCT sent as an object",
    rule: "BigQuery UNNEST: an ARRAY<STRUCT> yields STRUCT values; DESIGN.md §4",
    sql: `select c from ${STORAGE} cross join unnest(metadata) as m cross join unnest(m.context) as c where id = 's01'`,
    expect: [{ c: { host: "storage-1", pid: 11 } }],
  },
  {
    name: "INT64 beyond 2^53 is sent as a string",
    rule: "DESIGN.md §4: INT64 → number, a string only beyond ±2^53",
    sql: `select m.counter from ${EDGE} cross join unnest(metadata) as m where id = 'e11'`,
    expect: [{ counter: "9007199254740993" }],
  },
  {
    name: "a negative INT64 within 2^53 is a number",
    rule: "DESIGN.md §3 integral JSON numbers are INT64; §4 INT64 → number",
    sql: `select m.counter from ${EDGE} cross join unnest(metadata) as m where id = 'e12'`,
    expect: [{ counter: -42 }],
  },
  {
    name: "a JSON float is FLOAT64 sent as a number",
    rule: "DESIGN.md §3 non-integral numbers are FLOAT64; §4 FLOAT64 → number",
    sql: `select c.latitude from ${EDGE}, unnest(metadata) m, unnest(m.request) r, unnest(r.cf) c where id = 'e06'`,
    expect: [{ latitude: -23.5505 }],
  },
  {
    name: "a JSON boolean is BOOL",
    rule: "DESIGN.md §3: booleans are BOOL",
    sql: `select b.verifiedBot from ${EDGE}, unnest(metadata) m, unnest(m.request) r, unnest(r.cf) c, unnest(c.botManagement) b where id = 'e04'`,
    expect: [{ verifiedBot: true }],
  },
  {
    name: "a JSON null is NULL",
    rule: "DESIGN.md §4: NULL → null",
    sql: `select c.country from ${EDGE}, unnest(metadata) m, unnest(m.request) r, unnest(r.cf) c where id = 'e07'`,
    expect: [{ country: null }],
  },
  {
    name: "a field missing from one event is NULL in it",
    rule: "BigQuery schema: a field absent from a row is NULL",
    sql: `select m.error from ${AUTH} cross join unnest(metadata) as m where id = 'a01'`,
    expect: [{ error: null }],
  },
  {
    name: "a numeric-looking string stays a string",
    rule: "DESIGN.md §3: JSON strings are STRING whatever they contain",
    sql: `select h.content_length from ${EDGE}, unnest(metadata) m, unnest(m.request) r, unnest(r.headers) h where id = 'e02'`,
    expect: [{ content_length: "512" }],
  },
  {
    name: "an integer field that also holds floats widens to FLOAT64",
    rule: "DESIGN.md §3 schema widening: INT64 meeting FLOAT64 becomes FLOAT64",
    sql: `select id, m.responseTime from ${STORAGE} cross join unnest(metadata) as m where id in ('s04', 's06')`,
    expect: [
      { id: "s04", responseTime: 100 },
      { id: "s06", responseTime: 2000.75 },
    ],
  },
  {
    name: "a field no event has evaluates to NULL",
    rule: "DESIGN.md §3 departure: a field the schema does not know evaluates to NULL",
    sql: `select m.no_such_field as x from ${AUTH} cross join unnest(metadata) as m where id = 'a01'`,
    expect: [{ x: null }],
  },
  {
    name: "an unknown top-level column evaluates to NULL",
    rule: "DESIGN.md §3 departure: a field the schema does not know evaluates to NULL",
    sql: `select id, severity from ${PG} where id = 'p01'`,
    expect: [{ id: "p01", severity: null }],
  },
  {
    name: "an event without a top-level project has a NULL project",
    rule: "BigQuery schema: a column absent from a row is NULL",
    sql: `select id, project from ${PG} where id = 'p10'`,
    expect: [{ id: "p10", project: null }],
  },
  {
    name: "a path expression's last name is the implicit column name",
    rule: "BigQuery query syntax, implicit aliases: a path expression's alias is its last identifier",
    sql: `select m.level, m.status from ${AUTH} cross join unnest(metadata) as m where id = 'a03'`,
    expect: [{ level: "warning", status: 400 }],
  },

  // ---------------------------------------------------------------- lexical structure
  {
    name: "single-quoted string with a backslash-escaped quote",
    rule: "BigQuery lexical: quoted literals use backslash escapes (\\')",
    sql: `select 'it\\'s' as s from ${REST} where id = 't01'`,
    expect: [{ s: "it's" }],
  },
  {
    name: "double quotes delimit a string, not an identifier",
    rule: 'BigQuery lexical: "…" is a string literal',
    sql: `select id from ${REST} cross join unnest(metadata) as m where m.host = "db-alpha"`,
    expect: col("id", "t01", "t02"),
  },
  {
    name: "a raw string keeps its backslashes",
    rule: "BigQuery lexical: raw string literals r'…' do not process escapes",
    sql: `select r'a\\d+' as s from ${REST} where id = 't01'`,
    expect: [{ s: "a\\d+" }],
  },
  {
    name: "a triple-quoted string may contain quotes",
    rule: "BigQuery lexical: triple-quoted string literals",
    sql: `select '''it's "quoted"''' as s from ${REST} where id = 't01'`,
    expect: [{ s: `it's "quoted"` }],
  },
  {
    name: "escape sequences in a quoted string",
    rule: "BigQuery lexical: \\t and \\n escape sequences",
    sql: `select length('a\\tb\\nc') as n from ${REST} where id = 't01'`,
    expect: [{ n: 5 }],
  },
  {
    name: "a unicode escape in a quoted string",
    rule: "BigQuery lexical: \\uXXXX escape sequence",
    sql: `select 'caf\\u00e9' as s from ${REST} where id = 't01'`,
    expect: [{ s: "café" }],
  },
  {
    name: "comment markers and a semicolon inside a string are text",
    rule: "BigQuery lexical: comments and statements end outside literals only",
    sql: `select '-- not a comment; /* nor this */' as s from ${REST} where id = 't01'`,
    expect: [{ s: "-- not a comment; /* nor this */" }],
  },
  {
    name: "double-dash line comments anywhere",
    rule: "BigQuery lexical: -- comments",
    sql: `-- leading comment\nselect id -- after a column\nfrom ${REST} -- after the table\nwhere id = 't02' -- trailing`,
    expect: col("id", "t02"),
  },
  {
    name: "hash line comments",
    rule: "BigQuery lexical: # comments",
    sql: `# BigQuery also allows hash comments\nselect id from ${REST} # here too\nwhere id = 't02'`,
    expect: col("id", "t02"),
  },
  {
    name: "block comments between every token",
    rule: "BigQuery lexical: /* */ comments",
    sql: `/*a*/ select /* b */ id /* c */ from /* d */ ${REST} /* e */ where /* f */ id /* g */ = /* h */ 't02' /* i */`,
    expect: col("id", "t02"),
  },
  {
    name: "a multi-line block comment containing a quote",
    rule: "BigQuery lexical: /* */ comments span lines and hide quotes",
    sql: `select id /* it's\n a comment */ from ${REST} where id = 't02'`,
    expect: col("id", "t02"),
  },
  {
    name: "a trailing comma in the select list",
    rule: "BigQuery query syntax: a trailing comma is allowed in the SELECT list",
    sql: `select\n  id,\n  event_message,\nfrom ${REST}\nwhere id = 't03'`,
    expect: [{ id: "t03", event_message: "Listening on port 3000" }],
  },
  {
    name: "a trailing semicolon",
    rule: "BigQuery query syntax: a statement may end with ;",
    sql: `select id from ${REST} where id = 't03';`,
    expect: col("id", "t03"),
  },
  {
    name: "a trailing semicolon followed by a comment and whitespace",
    rule: "BigQuery lexical: comments and whitespace after the final ;",
    sql: `select id from ${REST} where id = 't03'; -- done\n  `,
    expect: col("id", "t03"),
  },
  {
    name: "keywords are case-insensitive",
    rule: "BigQuery lexical: keywords are case-insensitive",
    sql: `SELECT id FROM ${REST} WHERE id = 't03' ORDER BY id LIMIT 1`,
    expect: col("id", "t03"),
  },
  {
    name: "column names are case-insensitive",
    rule: "BigQuery lexical: column names are case-insensitive",
    sql: `select ID as id from ${REST} where Id = 't03'`,
    expect: col("id", "t03"),
  },
  {
    name: "backtick-quoted column names",
    rule: "BigQuery lexical: quoted identifiers",
    sql: `select \`id\`, \`event_message\` as msg from ${REST} where \`id\` = 't03'`,
    expect: [{ id: "t03", msg: "Listening on port 3000" }],
  },
  {
    name: "a table alias with and without AS",
    rule: "BigQuery query syntax: from_item [AS] alias",
    sql: `select a.id from ${REST} a join ${REST} as b on a.id = b.id where b.id = 't03'`,
    expect: col("id", "t03"),
  },
  {
    name: "SELECT without FROM",
    rule: "BigQuery query syntax: FROM is optional",
    sql: `select 1 as one, 'x' as s, true as b, null as n`,
    expect: [{ one: 1, s: "x", b: true, n: null }],
  },
  {
    name: "arithmetic precedence and parentheses",
    rule: "BigQuery operators: * binds tighter than +",
    sql: `select 1 + 2 * 3 as a, (1 + 2) * 3 as b, -2 - -3 as c`,
    expect: [{ a: 7, b: 9, c: 1 }],
  },
  {
    name: "a float literal in exponent notation",
    rule: "BigQuery lexical: floating point literals",
    sql: `select 1.5e3 as x, .25 as y`,
    expect: [{ x: 1500, y: 0.25 }],
  },

  // ---------------------------------------------------------------- WHERE
  {
    name: "AND binds tighter than OR",
    rule: "BigQuery operators: precedence of AND over OR",
    sql: `select id from ${EDGE} where project = 'gamma' or project = 'beta' and id = 'e06'`,
    expect: col("id", "e06", "e10", "e11", "e12"),
  },
  {
    name: "NOT",
    rule: "BigQuery logical operators: NOT",
    sql: `select id from ${REST} where not project = 'alpha'`,
    expect: col("id", "t03"),
  },
  {
    name: "IN with a list",
    rule: "BigQuery IN operator",
    sql: `select id from ${EDGE}, unnest(metadata) m, unnest(m.response) r where r.status_code in (401, 404)`,
    expect: col("id", "e03", "e04"),
  },
  {
    name: "NOT IN with a list",
    rule: "BigQuery IN operator: NOT IN",
    sql: `select id from ${REST} where project not in ('alpha', 'gamma')`,
    expect: col("id", "t03"),
  },
  {
    name: "BETWEEN is inclusive at both ends",
    rule: "BigQuery BETWEEN operator: X >= Y AND X <= Z",
    sql: `select id from ${EDGE}, unnest(metadata) m, unnest(m.response) r where r.status_code between 400 and 404`,
    expect: col("id", "e03", "e04", "e11"),
  },
  {
    name: "NOT BETWEEN",
    rule: "BigQuery BETWEEN operator: NOT BETWEEN",
    sql: `select id from ${EDGE}, unnest(metadata) m, unnest(m.response) r where r.status_code not between 200 and 499`,
    expect: col("id", "e05", "e06", "e08"),
  },
  {
    name: "IS NULL over a field some events lack",
    rule: "BigQuery IS NULL; a missing field is NULL",
    sql: `select id from ${EDGE}, unnest(metadata) m, unnest(m.response) r where r.origin_time is null`,
    expect: col("id", "e10", "e11"),
  },
  {
    name: "IS NOT NULL",
    rule: "BigQuery IS NOT NULL",
    sql: `select id from ${AUTH} cross join unnest(metadata) as m where m.error is not null`,
    expect: col("id", "a03", "a04", "a07", "a08"),
  },
  {
    name: "a comparison with NULL is never true",
    rule: "BigQuery comparison operators: NULL operands give NULL",
    sql: `select id from ${EDGE}, unnest(metadata) m, unnest(m.request) r, unnest(r.cf) c where c.country <> 'US'`,
    expect: col("id", "e02", "e04", "e06", "e12"),
  },
  {
    name: "!= is the same as <>",
    rule: "BigQuery comparison operators: != and <>",
    sql: `select id from ${EDGE}, unnest(metadata) m, unnest(m.request) r, unnest(r.cf) c where c.country != 'US' and c.country != 'FR'`,
    expect: col("id", "e02", "e06"),
  },
  {
    name: "string comparison is case-sensitive",
    rule: "BigQuery comparison operators: STRING compares by code points",
    sql: `select id from ${REST} where project = 'ALPHA'`,
    expect: [],
  },
  {
    name: "SELECT DISTINCT",
    rule: "BigQuery query syntax: SELECT DISTINCT",
    sql: `select distinct project from ${EDGE}`,
    expect: col("project", "alpha", "beta", "gamma"),
  },
  {
    name: "SELECT DISTINCT over two columns keeps a NULL group",
    rule: "BigQuery query syntax: SELECT DISTINCT treats NULLs as equal",
    sql: `select distinct project, m.host from ${PG} cross join unnest(metadata) as m`,
    expect: [
      { project: "alpha", host: "db-default" },
      { project: "beta", host: "db-default" },
      { project: null, host: "db-default" },
    ],
  },

  // ---------------------------------------------------------------- ORDER BY, LIMIT
  {
    name: "ORDER BY timestamp DESC with LIMIT",
    rule: "BigQuery ORDER BY and LIMIT clauses",
    sql: `select id from ${EDGE} order by timestamp desc limit 3`,
    expect: col("id", "e09", "e08", "e07"),
  },
  {
    name: "ORDER BY orders timestamps a microsecond apart",
    rule: "BigQuery TIMESTAMP has microsecond precision; ORDER BY ascending by default",
    sql: `select id from ${EDGE} where project = 'alpha' order by timestamp`,
    expect: col("id", ...ALPHA_EDGE),
  },
  {
    name: "NULLs sort first ascending by default",
    rule: "BigQuery ORDER BY: NULLs first for ASC unless NULLS LAST",
    sql: `select id, r.origin_time as t from ${EDGE}, unnest(metadata) m, unnest(m.response) r where project = 'gamma' order by t, id`,
    expect: [
      { id: "e10", t: null },
      { id: "e11", t: null },
      { id: "e12", t: 9 },
    ],
  },
  {
    name: "NULLs sort last descending by default",
    rule: "BigQuery ORDER BY: NULLs last for DESC unless NULLS FIRST",
    sql: `select id, r.origin_time as t from ${EDGE}, unnest(metadata) m, unnest(m.response) r where project = 'gamma' order by t desc, id`,
    expect: [
      { id: "e12", t: 9 },
      { id: "e10", t: null },
      { id: "e11", t: null },
    ],
  },
  {
    name: "ORDER BY … ASC NULLS LAST",
    rule: "BigQuery ORDER BY: NULLS LAST",
    sql: `select id from ${EDGE}, unnest(metadata) m, unnest(m.response) r where project = 'gamma' order by r.origin_time asc nulls last, id`,
    expect: col("id", "e12", "e10", "e11"),
  },
  {
    name: "ORDER BY … DESC NULLS FIRST",
    rule: "BigQuery ORDER BY: NULLS FIRST",
    sql: `select id from ${EDGE}, unnest(metadata) m, unnest(m.response) r where project = 'gamma' order by r.origin_time desc nulls first, id desc`,
    expect: col("id", "e11", "e10", "e12"),
  },
  {
    name: "NULL strings sort first ascending",
    rule: "BigQuery ORDER BY: NULLs first for ASC",
    sql: `select id, c.country from ${EDGE}, unnest(metadata) m, unnest(m.request) r, unnest(r.cf) c where project = 'beta' order by c.country`,
    expect: [
      { id: "e07", country: null },
      { id: "e06", country: "BR" },
      { id: "e08", country: "US" },
    ],
  },
  {
    name: "ORDER BY an output alias",
    rule: "BigQuery ORDER BY: may refer to SELECT list aliases",
    sql: `select id, r.status_code as status from ${EDGE}, unnest(metadata) m, unnest(m.response) r where project = 'beta' order by status desc`,
    expect: [
      { id: "e08", status: 503 },
      { id: "e07", status: 204 },
      { id: "e06", status: 101 },
    ],
  },
  {
    name: "ORDER BY a select-list ordinal",
    rule: "BigQuery ORDER BY: integer literals are ordinals of the SELECT list",
    sql: `select id, r.status_code from ${EDGE}, unnest(metadata) m, unnest(m.response) r where project = 'beta' order by 2`,
    expect: [
      { id: "e06", status_code: 101 },
      { id: "e07", status_code: 204 },
      { id: "e08", status_code: 503 },
    ],
  },
  {
    name: "ORDER BY an expression that is not selected",
    rule: "BigQuery ORDER BY: any expression over the FROM columns",
    sql: `select id from ${REST} order by length(event_message)`,
    expect: col("id", "t02", "t03", "t01"),
  },
  {
    name: "ORDER BY two keys in opposite directions",
    rule: "BigQuery ORDER BY: several keys, each with its direction",
    sql: `select project, id from ${EDGE} where project in ('beta', 'gamma') order by project desc, timestamp asc`,
    expect: [
      { project: "gamma", id: "e10" },
      { project: "gamma", id: "e11" },
      { project: "gamma", id: "e12" },
      { project: "beta", id: "e06" },
      { project: "beta", id: "e07" },
      { project: "beta", id: "e08" },
    ],
  },
  {
    name: "LIMIT with OFFSET",
    rule: "BigQuery LIMIT and OFFSET clause",
    sql: `select id from ${EDGE} order by timestamp limit 3 offset 2`,
    expect: col("id", "e12", "e01", "e02"),
  },
  {
    name: "an OFFSET past the end returns no rows",
    rule: "BigQuery LIMIT and OFFSET clause",
    sql: `select id from ${EDGE} order by timestamp limit 5 offset 20`,
    expect: [],
  },
  {
    name: "LIMIT 0 returns no rows",
    rule: "BigQuery LIMIT clause",
    sql: `select id from ${EDGE} limit 0`,
    expect: [],
  },
  {
    name: "LIMIT bound from an integer parameter",
    rule: "BigQuery LIMIT: count may be a query parameter; DESIGN.md §5 parameters are bound",
    sql: `select id from ${REST} order by timestamp limit @n`,
    params: { n: { kind: "integer", value: "2" } },
    expect: col("id", "t01", "t02"),
  },
];
