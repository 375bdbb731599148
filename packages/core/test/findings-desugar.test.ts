import { describe, expect, it } from "vitest";
import { desugarSql } from "../src/parse/desugar.ts";
import { lexSql } from "../src/parse/lex-sql.ts";
import { parseSelect } from "../src/parse/parse-sql.ts";

// Issue 11's token-level rules, input → output.

describe("unknown escapes in quoted strings", () => {
  it.each([
    ["'\\s'", "\\s"],
    ["'\\d+\\.\\w'", "\\d+\\.\\w"],
    ["'a\\tb'", "a\tb"],
    ["'\\x41\\u00e9'", "Aé"],
    ["r'\\s'", "\\s"],
  ])("%s reads as %j", (sql, value) => {
    expect(lexSql(sql)[0]).toMatchObject({ type: "string", value });
  });

  it.each([
    ["'it''s'", "it's"],
    ['"say ""hi"""', 'say "hi"'],
    ["'a''''b'", "a''b"],
    ["'a'''", "a'"],
    ["''", ""],
    ["'''x'''", "x"],
  ])("a doubled quote: %s reads as %j (how Studio escapes a search)", (sql, value) => {
    const tokens = lexSql(sql);
    expect(tokens[0]).toMatchObject({ type: "string", value });
    expect(tokens[1]?.type).toBe("eof");
  });

  it("a malformed known escape is still a syntax error", () => {
    expect(() => lexSql("'\\x4'")).toThrow(/Invalid escape sequence/);
  });
});

describe("constructs refused by name before parsing", () => {
  it.each([
    ["select * from t pivot (sum(n) for k in ('a'))", "PIVOT"],
    ["select * from t unpivot (v for k in (a, b))", "UNPIVOT"],
    ["select * from t unpivot include nulls (v for k in (a))", "UNPIVOT"],
    ["select id from t for system_time as of current_timestamp()", "FOR SYSTEM_TIME AS OF"],
    ["select id from t tablesample system (10 percent)", "TABLESAMPLE"],
    ["select as struct 1 as a", "SELECT AS STRUCT"],
    ["with recursive r as (select 1 as n) select n from r", "WITH RECURSIVE"],
  ])("%s", (sql, name) => {
    expect(() => desugarSql(sql)).toThrow(
      expect.objectContaining({ code: "sql_invalid", message: expect.stringContaining(name) }),
    );
  });

  it("leaves columns named pivot or unpivot alone", () => {
    expect(() => desugarSql("select t.pivot, unpivot from t")).not.toThrow();
  });
});

describe("subscripts after CASE … END", () => {
  it("wrap the whole CASE expression", () => {
    expect(desugarSql("select case when a then [1] else [2] end[offset(0)] as v").text).toBe(
      "select __qes_subscript(case when a then __qes_array(1) else __qes_array(2) end, 0, 0) as v",
    );
  });

  it("wrap nested CASEs as one", () => {
    expect(desugarSql("select case when a then case when b then x end end[1] as v").text).toBe(
      "select __qes_subscript(case when a then case when b then x end end, 0, 1) as v",
    );
  });
});

describe("EXTRACT(WEEK(<weekday>) FROM …)", () => {
  it("passes the part with its weekday", () => {
    const d = desugarSql("select extract(week(monday) from ts) as w");
    expect(d.text).toBe("select __qes_extract('__qes_s0', ts) as w");
    expect(d.strings).toEqual(["WEEK(MONDAY)"]);
  });
});

describe("parenthesised join groups right of an outer join", () => {
  it("become a marked subquery", () => {
    expect(desugarSql("select 1 from a left join (b cross join unnest(b.x) as y) on a.k = y.k").text).toBe(
      "select 1 from a left join (SELECT __qes_join_group FROM b cross join unnest (b.x) as y) on a.k = y.k",
    );
  });

  it("with outer joins inside, after an inner JOIN, too", () => {
    expect(desugarSql("select 1 from a join (b left join c on b.k = c.k) on a.k = b.k").text).toBe(
      "select 1 from a join (SELECT __qes_join_group FROM b left join c on b.k = c.k) on a.k = b.k",
    );
  });

  it("inner groups are still flattened", () => {
    expect(desugarSql("select 1 from a join (b join c on b.k = c.k) on a.k = b.k").text).not.toContain(
      "__qes_join_group",
    );
  });
});

describe("syntax errors quote what the user wrote", () => {
  it("never the desugared text", () => {
    expect(() => parseSelect("select [1, 2][offset(0)] + as x")).toThrow(
      expect.objectContaining({ code: "sql_syntax", message: 'Syntax error at "x" (line 1, column 31).' }),
    );
  });
});
