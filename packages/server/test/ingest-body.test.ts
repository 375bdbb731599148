import { gzipSync } from "node:zlib";
import { MAX_EVENT_DEPTH } from "@qes/core";
import { describe, expect, it } from "vitest";
import { bodyFormat, parseIngestBody, parseIngestEvents } from "../src/ingest/parse-ingest-body.ts";
import { refusal } from "./fixtures/refusal.ts";

const json = (text: string) => parseIngestBody(Buffer.from(text), "json");
const ndjson = (text: string) => parseIngestBody(Buffer.from(text), "ndjson");

describe("ingest body forms", () => {
  it("takes an array, one object, {batch: [...]} and NDJSON", () => {
    expect(json('[{"a":1},{"a":2}]')).toEqual([{ a: 1 }, { a: 2 }]);
    expect(json('{"a":1}')).toEqual([{ a: 1 }]);
    expect(json('{"batch":[{"a":1},{"a":2}]}')).toEqual([{ a: 1 }, { a: 2 }]);
    // an event that merely has a key "batch" among others is one event
    expect(json('{"batch":[1],"event_message":"x"}')).toEqual([{ batch: [1], event_message: "x" }]);
    expect(ndjson('{"a":1}\n\n{"a":2}\r\n')).toEqual([{ a: 1 }, { a: 2 }]);
    expect(json("[]")).toEqual([]);
  });

  it("refuses a body of more events than the queue takes with 413 before checking any of them", () => {
    const four = (form: "json" | "ndjson", text: string) =>
      refusal(() => parseIngestEvents(Buffer.from(text), form, 4));
    // the fifth is not an event, but the count comes first
    for (const [form, text] of [
      ["json", "[{},{},{},{},5]"],
      ["json", '{"batch":[{},{},{},{},5]}'],
      ["json", "{}\n{}\n{}\n{}\n5"],
      ["ndjson", "{}\n{}\n{}\n{}\n5"],
      ["ndjson", "{}\n{}\n\n{}\n{}\n{"],
    ] as const) {
      const e = four(form, text);
      expect(e.code, text).toBe("request_too_large");
      expect(e.message).toMatch(/at most 4 fit in one request \(QES_INGEST_QUEUE_EVENTS\)/);
    }
    expect(parseIngestEvents(Buffer.from("{}\n{}\n{}\n{}\n\n"), "ndjson", 4).events).toHaveLength(4);
    expect(parseIngestEvents(Buffer.from("[{},{},{},{}]"), "json", 4).events).toHaveLength(4);
  });

  it("names the event of an array or {batch} body that is not valid JSON, by its 0-based index", () => {
    const cases: [string, RegExp][] = [
      ['[{"a":1},{"b":2},{"c": }]', /^event 2: not valid JSON \(Unexpected token '}'\)$/],
      ['  {"batch": [{"a":1}, {"b":"x\\"]}"}, {"c" 1}]}', /^event 2: not valid JSON/],
      ['[{"a":[1,2]},{"b":{"c":[{}]}} {"d":1}]', /^after event 1: not valid JSON \(expected "," or "]"/],
      ['[{"a":1},]', /^after event 0: not valid JSON \(a "," before "]"/],
      ['[{"a":1},{"b"', /^event 1: not valid JSON/],
      ['[{"a":1}', /^after event 0: not valid JSON \(the body ends before the array's "]"/],
      ['[{"a":1},', /^event 1: not valid JSON \(the body ends before it/],
      ["[tru]", /^event 0: not valid JSON/],
    ];
    for (const [text, message] of cases) expect(refusal(() => json(text)).message, text).toMatch(message);
    // not an array body, or a fault outside its events: the whole body's reason, quoting none of it
    expect(refusal(() => json('{"a": }')).message).toMatch(
      /^The body is not valid JSON \(Unexpected token '}'\)\./,
    );
    expect(refusal(() => json(`{"a": "${"x".repeat(200)}", }`)).message).not.toContain("xxx");
  });

  it("keeps integers beyond 2^53 exact", () => {
    const [event] = json('[{"n":9007199254740993}]') as [{ n: bigint }];
    expect(event.n).toBe(9007199254740993n);
    // in NDJSON, deep inside an event, after events with 16-digit runs that need no exact parse
    const lines = ndjson(
      '{"t":"1736931600123456","u":1736931600123456}\n{"m":[{"r":{"n":-9223372036854775808}}],"f":1e16}',
    );
    expect(lines).toEqual([
      { t: "1736931600123456", u: 1736931600123456 },
      { m: [{ r: { n: -9223372036854775808n } }], f: 1e16 },
    ]);
    expect(json('[{"u":1736931600123456},{"n":12345678901234567}]')).toEqual([
      { u: 1736931600123456 },
      { n: 12345678901234567n },
    ]);
  });

  it("names the index of the first event that is not an object", () => {
    const e = refusal(() => json('[{"a":1},{"a":2},"text",{"a":3}]'));
    expect(e.code).toBe("invalid_event");
    expect(e.message).toMatch(/^event 2: an event must be a JSON object, got a string/);
    expect(refusal(() => json("[null]")).message).toMatch(/^event 0: .* got null/);
    expect(refusal(() => json('{"batch":[{},[]]}')).message).toMatch(/^event 1: .* got an array/);
    expect(refusal(() => json("42")).message).toMatch(/^event 0: .* got a number/);
  });

  it("names the index and line of a malformed NDJSON line", () => {
    const e = refusal(() => ndjson('{"a":1}\n\n{"a":\n{"a":3}'));
    expect(e.code).toBe("invalid_event");
    expect(e.message).toMatch(/^event 1 \(line 3\): not valid JSON/);
    expect(e.line).toBe(3);
  });

  it("refuses malformed JSON, an empty body and invalid UTF-8 without echoing the body", () => {
    const e = refusal(() => json('[{"secret-ish": "abc"},'));
    expect(e.code).toBe("invalid_event");
    expect(e.message).toMatch(/not valid JSON/);
    expect(e.message).not.toContain("secret-ish");
    expect(refusal(() => json("  \n")).message).toMatch(/empty/);
    // the same in NDJSON, blank lines included; an empty array is a batch of none
    for (const text of ["", "\n\n", " \r\n\t\n", "\uFEFF\n"]) {
      const e = refusal(() => ndjson(text));
      expect(e.code, JSON.stringify(text)).toBe("invalid_event");
      expect(e.message, JSON.stringify(text)).toMatch(/The body is empty/);
    }
    expect(json("[]")).toEqual([]);
    expect(refusal(() => parseIngestBody(Buffer.from([0x5b, 0xff, 0x5d]), "json")).message).toMatch(/UTF-8/);
  });

  it("says an NDJSON line holds several events when it does (curl -d drops newlines), not only 'not valid JSON'", () => {
    for (const text of [
      '{"a":1}\n{"b":2} {"c":3}\n',
      '{"a":1}\n{"b":2}{"c":3}',
      '{"a":1}\n{"b":2}\r{"c":3}\r',
    ]) {
      const e = refusal(() => ndjson(text));
      expect(e.code, text).toBe("invalid_event");
      expect(e.line, text).toBe(2);
      expect(e.message, text).toMatch(
        /^event 1 \(line 2\): the line holds more than one JSON text; NDJSON is one event per line.*--data-binary/,
      );
    }
    // a line that is not valid JSON to begin with keeps JSON's reason
    for (const text of ['{"a":1}\n{"b": } {"c":3}', '{"a":1}\n{"b":2} x', '{"a":1}\n{"b":2'])
      expect(refusal(() => ndjson(text)).message, text).toMatch(/^event 1 \(line 2\): not valid JSON/);
  });

  it("names Content-Encoding when a gzip body is sent without it, in either form", () => {
    for (const form of ["json", "ndjson"] as const) {
      const e = refusal(() => parseIngestBody(gzipSync('[{"event_message":"x"}]'), form));
      expect(e.code).toBe("invalid_parameter");
      expect(e.param).toBe("Content-Encoding");
      expect(e.message).toMatch(/gzip data but the request has no Content-Encoding: gzip/);
    }
  });

  it("refuses nesting deeper than the limit, at any depth of the body, without overflowing", () => {
    const deep = (n: number) => `${'{"a":'.repeat(n)}1${"}".repeat(n)}`;
    expect(json(`[${deep(MAX_EVENT_DEPTH)}]`)).toHaveLength(1);
    const e = refusal(() => json(`[{}, ${deep(MAX_EVENT_DEPTH + 1)}]`));
    expect(e.code).toBe("invalid_event");
    expect(e.message).toMatch(/^event 1: .*nested deeper than 64/);
    // arrays count as objects do, and every key is looked into, `__proto__` (an own key) included
    const arrays = (n: number) => `{"a":${"[".repeat(n - 1)}1${"]".repeat(n - 1)}}`;
    expect(json(`[${arrays(MAX_EVENT_DEPTH)}]`)).toHaveLength(1);
    expect(refusal(() => json(`[${arrays(MAX_EVENT_DEPTH + 1)}]`)).message).toMatch(
      /^event 0: .*nested deeper/,
    );
    const under = (key: string) => `[{"z":1,"${key}":${deep(MAX_EVENT_DEPTH)},"y":2}]`;
    for (const key of ["__proto__", "constructor", "b"])
      expect(refusal(() => json(under(key))).message, key).toMatch(/^event 0: .*nested deeper/);
    // 200,000 levels: no RangeError, a 400 (the exact-integer parser is recursive: never reached)
    const huge = `[${"[".repeat(200_000)}9007199254740993${"]".repeat(200_000)}]`;
    expect(refusal(() => json(huge)).code).toBe("invalid_event");
    expect(refusal(() => ndjson(`{"x":${"[".repeat(100_000)}${"]".repeat(100_000)}}`)).code).toBe(
      "invalid_event",
    );
    // depth hidden by a duplicate key (JSON.parse keeps the last value), reached by the exact
    // parser only: refused as too deep, not as "not valid JSON (Maximum call stack size exceeded)"
    const hidden = `{"a":${"[".repeat(100_000)}${"]".repeat(100_000)},"a":9007199254740993}`;
    expect(refusal(() => ndjson(hidden)).message).toMatch(
      /^event 0 \(line 1\): objects and arrays nested deeper than 64/,
    );
    expect(refusal(() => json(`[${hidden}]`)).message).toMatch(/nested deeper than 64/);
  });

  it("chooses the form from Content-Type and names the header when it is not JSON or NDJSON", () => {
    expect(bodyFormat(undefined)).toBe("json");
    expect(bodyFormat("application/json; charset=utf-8")).toBe("json");
    expect(bodyFormat("application/vnd.api+json")).toBe("json");
    expect(bodyFormat("application/x-ndjson")).toBe("ndjson");
    expect(bodyFormat("Application/X-NDJSON; charset=utf-8")).toBe("ndjson");
    for (const type of [
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/xml",
    ]) {
      const e = refusal(() => bodyFormat(type));
      expect(e.code).toBe("unsupported_media_type");
      expect(e.param).toBe("Content-Type");
      expect(e.allowed).toEqual(["application/json", "application/x-ndjson"]);
    }
  });
});

describe("keys that become one key once NUL and lone surrogates are cleaned", () => {
  it("refuse their event by index in every body form, nothing kept of either value", () => {
    const bad = '{"id":"kept","\\u0000id":"other","event_message":"x"}';
    const good = '{"id":"g","event_message":"y"}';
    for (const [form, f, where] of [
      ["array", () => json(`[${good},${bad}]`), /^event 1: /],
      ["batch", () => json(`{"batch":[${good},${good},${bad}]}`), /^event 2: /],
      ["one object", () => json(bad), /^event 0: /],
      ["ndjson", () => ndjson(`${good}\n\n${bad}`), /^event 1 \(line 3\): /],
      ["json texts", () => json(`${good}\n${bad}`), /^event 1 \(line 2\): /],
    ] as const) {
      const e = refusal(f);
      expect(e.code, form).toBe("invalid_event");
      expect(e.message, form).toMatch(where);
      expect(e.message, form).toContain('the keys "id" and "\\u0000id" are one key');
    }
    // a lone surrogate deep inside a record, against the same text after it
    const deep = refusal(() => json('[{"m":[{"r":{"a\\udc00":1,"a\\ufffd":2}}]}]'));
    expect(deep.message).toMatch(/^event 0: the keys "a\\udc00" and "a�"/);
  });
});

describe("several JSON texts in a body labelled application/json", () => {
  it("are one event each: NDJSON (LF or CRLF, trailing newline) and objects back to back", () => {
    // Fluent Bit `format json_lines` (labelled application/json by some versions)
    expect(json('{"a":1}\n{"a":2}\n')).toEqual([{ a: 1 }, { a: 2 }]);
    expect(json('{"a":1}\r\n\r\n{"a":2}\r\n')).toEqual([{ a: 1 }, { a: 2 }]);
    // Fluent Bit `format json_stream`: nothing between the objects
    expect(json('{"a":1}{"a":"}{"}{"a":[3]}')).toEqual([{ a: 1 }, { a: "}{" }, { a: [3] }]);
    expect(json('\uFEFF{"a":1} {"b":"\\"}"}')).toEqual([{ a: 1 }, { b: '"}' }]);
    // integers beyond 2^53 stay exact here too
    expect(json('{"n":1}\n{"n":9007199254740993}')).toEqual([{ n: 1 }, { n: 9007199254740993n }]);
  });

  it("refuse a bad text by its index and line, and an incomplete body as before", () => {
    const broken = refusal(() => json('{"a":1}\n{"a":2}\n{"a":\n'));
    expect(broken.code).toBe("invalid_event");
    expect(broken.message).toMatch(/^event 2 \(line 3\): not valid JSON/);
    expect(broken.line).toBe(3);
    expect(refusal(() => json('{"a":1}\n[{"a":2}]')).message).toMatch(/^event 1 \(line 2\): .* got an array/);
    expect(refusal(() => json('{"a":1} 5')).message).toMatch(/^event 1 \(line 1\): .* got a number/);
    // a body's array of events followed by more text: said so, not only "got an array" for event 0
    for (const body of ['[{"a":1}] garbage', '[{"a":1}]\n[{"a":2}]', '[{"a":1}]]']) {
      expect(refusal(() => json(body)).message, body).toMatch(
        /^event 0 \(line 1\): .* got an array: the body holds more than one JSON text/,
      );
    }
    expect(refusal(() => json('{"a":1}\ngarbage')).message).toMatch(/^event 1 \(line 2\): not valid JSON/);
    const deep = `${'{"a":'.repeat(MAX_EVENT_DEPTH + 1)}1${"}".repeat(MAX_EVENT_DEPTH + 1)}`;
    expect(refusal(() => json(`{"a":1}\n${deep}`)).message).toMatch(/^event 1 \(line 2\): .*nested deeper/);
    // one array left open: the event it ends before is named, as any other bad event
    expect(refusal(() => json('[{"a":1},')).message).toMatch(/^event 1: not valid JSON \(the body ends/);
    expect(refusal(() => json('{"a":1')).message).toMatch(/^The body is not valid JSON/);
  });
});

describe("numbers beyond FLOAT64", () => {
  it("refuse their event by index (and line), in every body form; 1e308 and 1e-400 are fine", () => {
    expect(refusal(() => json('[{"a":1},{"m":{"r":[1,1e400]}}]')).message).toMatch(
      /^event 1: a number is beyond the range of FLOAT64/,
    );
    expect(refusal(() => json(`{"a":-${"9".repeat(309)}}`)).message).toMatch(/^event 0: a number is beyond/);
    const nd = refusal(() => ndjson('{"a":1}\n{"a":2E+999}'));
    expect(nd.message).toMatch(/^event 1 \(line 2\): a number is beyond/);
    expect(nd.line).toBe(2);
    expect(refusal(() => json('{"a":1}{"a":1e400}')).message).toMatch(
      /^event 1 \(line 1\): a number is beyond/,
    );
    expect(json('[{"a":1e308,"b":1e-400,"c":"1e400"}]')).toEqual([{ a: 1e308, b: 0, c: "1e400" }]);
  });
});
