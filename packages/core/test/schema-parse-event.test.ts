import { describe, expect, it } from "vitest";
import { QesError } from "../src/errors.ts";
import { contentEventId, RequestEventIds } from "../src/schema/event-id.ts";
import { type JsonObject, jsonText, parseEventJsonText, parseJsonText } from "../src/schema/json-value.ts";
import { logEventFromJson, MAX_KEY_BYTES, parseEvent } from "../src/schema/parse-event.ts";
import { checkSourceName } from "../src/schema/source-name.ts";
import { formatMicros, parseIsoTimestampMicros } from "../src/schema/timestamp-micros.ts";

const NOW = 1_736_931_600_000_000n;

describe("parseEvent", () => {
  it("keeps an INT64 beyond 2^53 exact and small numbers as numbers", () => {
    const e = parseEvent(
      '{"event_message":"x","metadata":{"big":9007199254740993,"small":5,"f":1.5}}',
      1,
      NOW,
      "test",
    )!;
    const m = e.body.metadata as Record<string, unknown>;
    expect(m.big).toBe(9007199254740993n);
    expect(m.small).toBe(5);
    expect(m.f).toBe(1.5);
    expect(jsonText(e.body)).toContain('"big":9007199254740993');
  });

  it("defaults id to a UUID and timestamp to the load time", () => {
    const e = parseEvent('{"event_message":"x"}', 1, NOW, "test")!;
    expect(e.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(e.timestamp).toBe(NOW);
  });

  it("keeps microseconds of ISO timestamps; no zone is UTC; accepts integer micros", () => {
    expect(parseEvent('{"timestamp":"2025-01-15T09:00:00.123456Z"}', 1, NOW, "test")!.timestamp).toBe(
      1736931600123456n,
    );
    expect(parseEvent('{"timestamp":"2025-01-15 09:00:00.123456"}', 1, NOW, "test")!.timestamp).toBe(
      1736931600123456n,
    );
    expect(parseEvent('{"timestamp":"2025-01-15T11:00:00.123456+02:00"}', 1, NOW, "test")!.timestamp).toBe(
      1736931600123456n,
    );
    expect(parseEvent('{"timestamp":1736931600123456}', 1, NOW, "test")!.timestamp).toBe(1736931600123456n);
  });

  it("reads a unix time in seconds, milliseconds, microseconds or nanoseconds by its size", () => {
    const at = (ts: string) => parseEvent(`{"timestamp":${ts}}`, 1, NOW, "test")!.timestamp;
    const micros = 1736931600123456n;
    // Fluent Bit's `epoch` and `double`, Date.now(), this API's own form, Go's UnixNano()
    expect(at("1736931600")).toBe(1736931600000000n);
    expect(at("1736931600.123456")).toBe(micros);
    expect(at("1736931600.1234567")).toBe(micros);
    expect(at("1736931600123")).toBe(1736931600123000n);
    expect(at("1736931600123.456")).toBe(micros);
    expect(at("1736931600123456")).toBe(micros);
    expect(at("1736931600123456789")).toBe(micros);
    // the same as text
    expect(at('"1736931600"')).toBe(1736931600000000n);
    expect(at('"1736931600123456789"')).toBe(micros);
    // sizes no unit makes a 2001–5138 time of stay microseconds, as before
    expect(at("0")).toBe(0n);
    expect(at("-1")).toBe(-1n);
    expect(at("123456")).toBe(123456n);
    expect(at("946684800000000")).toBe(946684800000000n);
    // a fraction of microseconds or nanoseconds is not a time
    expect(() => at("1736931600123456.5")).toThrow(/"timestamp" is number 1736931600123456\.5/);
    expect(() => at("1.5")).toThrow(/"timestamp"/);
  });

  it("takes an id that is a string or a number; an empty one is no id; a longer one than an index takes is refused", () => {
    const ingest = (event: Record<string, unknown>) => logEventFromJson(event as never, "s", NOW, "event 4");
    expect(ingest({ id: 42 }).id).toBe("42");
    expect(ingest({ id: "a" }).id).toBe("a");
    // an empty id is derived from the content, like an absent one: two events stay two
    const a = ingest({ id: "", event_message: "first" });
    const b = ingest({ id: "", event_message: "second" });
    expect(a.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8/);
    expect(a.id).not.toBe(b.id);
    expect(ingest({ id: " ", event_message: "first" }).id).not.toBe(" ");
    expect(parseEvent('{"id":""}', 1, NOW, "test")!.id).toMatch(/^[0-9a-f-]{36}$/);
    for (const id of [{ a: 1 }, [1], true]) {
      expect(() => ingest({ id })).toThrow(/^event 4: "id" is .*; expected a string or a number/);
    }
    expect(() => parseEvent('{"id":{"a":1}}', 3, NOW, "test")).toThrow(/^line 3: "id"/);
    expect(ingest({ id: "é".repeat(MAX_KEY_BYTES / 2) }).id).toHaveLength(MAX_KEY_BYTES / 2);
    expect(() => ingest({ id: "é".repeat(MAX_KEY_BYTES / 2 + 1) })).toThrow(
      /^event 4: "id" is longer than 1024 bytes/,
    );
    expect(() => ingest({ project: "p".repeat(MAX_KEY_BYTES + 1) })).toThrow(/^event 4: "project" is longer/);
    expect(() => ingest({ project: { ref: "p".repeat(MAX_KEY_BYTES) } })).toThrow(/"project" is longer/);
    expect(() => parseEvent(`{"project":"${"p".repeat(MAX_KEY_BYTES + 1)}"}`, 2, NOW, "test")).toThrow(
      /^line 2: "project"/,
    );
  });

  it("refuses a number beyond FLOAT64's range, which JSON.parse makes Infinity", () => {
    expect(() => parseEvent('{"m":{"x":[1e400]}}', 5, NOW, "test")).toThrow(
      /^line 5: a number is beyond the range of FLOAT64/,
    );
    expect(parseEvent('{"m":1.7976931348623157e308}', 5, NOW, "test")!.body.m).toBe(1.7976931348623157e308);
    // every spelling, wherever it stands: 309 digits, 1e+400, below an exact INT64 read again exactly
    for (const line of [
      `{"n":${"9".repeat(309)}}`,
      '{"a":[{"b":-1E+400}]}',
      '{"big":9223372036854775807,"r":[0.5,17976931348623159e292]}',
    ]) {
      expect(() => parseEvent(line, 6, NOW, "test"), line).toThrow(
        /^line 6: a number is beyond the range of FLOAT64/,
      );
    }
    // what only looks like one in text is no number: a hex digest, a string, an exponent below range
    const fine = parseEvent(
      '{"h":"c733e6dc3e123","s":"1e400","u":1e-400,"i":9007199254740993}',
      7,
      NOW,
      "test",
    )!;
    expect(fine.body).toEqual({ h: "c733e6dc3e123", s: "1e400", u: 0, i: 9007199254740993n });
  });

  it("names the line and the problem for malformed input", () => {
    const err = (line: string) => {
      try {
        parseEvent(line, 7, NOW, "test");
      } catch (e) {
        return e as QesError;
      }
      throw new Error("no error");
    };
    const a = err('{"a":');
    expect(a.code).toBe("invalid_event");
    expect(a.line).toBe(7);
    expect(a.message).toMatch(/line 7: not valid JSON/);
    expect(err("[1,2]").message).toMatch(/line 7: an event must be a JSON object, got an array/);
    expect(err('{"timestamp":"yesterday"}').message).toMatch(/line 7: "timestamp"/);
  });

  it("gives null for a blank line", () => {
    expect(parseEvent("   ", 1, NOW, "test")).toBeNull();
  });
});

describe("timestamps", () => {
  it("parses and formats exactly", () => {
    expect(parseIsoTimestampMicros("1970-01-01")).toBe(0n);
    expect(parseIsoTimestampMicros("1969-12-31T23:59:59.999999Z")).toBe(-1n);
    expect(parseIsoTimestampMicros("2024-02-30T00:00:00Z")).toBeNull();
    expect(parseIsoTimestampMicros("2025-01-15 09:00:00.123 UTC")).toBe(1736931600123000n);
    expect(formatMicros(1736931600123456n)).toBe("2025-01-15T09:00:00.123456");
    expect(formatMicros(1736931600000000n)).toBe("2025-01-15T09:00:00");
    expect(formatMicros(-1n, " ", "always")).toBe("1969-12-31 23:59:59.999999");
  });

  it("parses JSON losslessly only when needed", () => {
    expect(parseJsonText('{"a":"1234567890123456789"}')).toEqual({ a: "1234567890123456789" });
    expect(parseJsonText("[123456789012345678901234]")).toEqual([Number("123456789012345678901234")]);
    expect(parseJsonText('{"a":1,"a":2}')).toEqual({ a: 2 });
    // beyond 2^53: exact wherever it sits, after any number of exact ones
    expect(
      parseJsonText('{"t":1736931600123456,"b":[[{"n":9007199254740993}]],"c":-9223372036854775808}'),
    ).toEqual({
      t: 1736931600123456,
      b: [[{ n: 9007199254740993n }]],
      c: -9223372036854775808n,
    });
    expect(parseJsonText("9007199254740993")).toBe(9007199254740993n);
    // written with an exponent: a double, whichever parser reads it
    expect(parseJsonText('{"a":1e16,"b":"1234567890123456"}')).toEqual({ a: 1e16, b: "1234567890123456" });
    // malformed text is refused by the same parser as before, with its message
    expect(() => parseJsonText('{"a":12345678901234567,}')).toThrow(SyntaxError);
    expect(() => parseJsonText('{"a":1,}')).toThrow(SyntaxError);
    // any depth, as JSON.parse takes it
    expect(parseJsonText("[".repeat(100_000) + "]".repeat(100_000))).toBeInstanceOf(Array);
  });
});

describe("NUL characters and lone surrogates", () => {
  it("a lone surrogate in a string or key becomes U+FFFD; an escaped pair stays the character", () => {
    expect(parseEventJsonText('{"a":"x\\ud800y","b":["\\udc00"],"k\\uDFFF":1,"e":"\\ud83d\\ude00"}')).toEqual(
      {
        a: "x\uFFFDy",
        b: ["\uFFFD"],
        "k\uFFFD": 1,
        e: "😀",
      },
    );
  });

  it("are taken out of every string and key at parsing, at any depth (PostgreSQL cannot store them)", () => {
    const e = parseEvent(
      '{"id":"a\\u0000b","event_message":"x\\u0000y","k\\u0000ey":1,"m":[{"s":"\\u0000","n\\u0000":["p\\u0000q",2]}],"z":9007199254740993}',
      1,
      NOW,
      "test",
    )!;
    expect(e.id).toBe("ab");
    expect(e.body).toEqual({
      id: "ab",
      event_message: "xy",
      key: 1,
      m: [{ s: "", n: ["pq", 2] }],
      z: 9007199254740993n,
    });
    // key order is kept; a __proto__ key stays a key
    expect(
      Object.keys(parseEventJsonText('{"a\\u0000":1,"b":2,"__proto__":{"c\\u0000":"\\u0000"}}') as object),
    ).toEqual(["a", "b", "__proto__"]);
    expect(parseEventJsonText('{"__proto__":{"c\\u0000":"\\u0000"}}')).toEqual(
      JSON.parse('{"__proto__":{"c":""}}'),
    );
    // a string that only looks like the escape is untouched
    expect(parseEventJsonText('{"a":"\\\\u0000"}')).toEqual({ a: "\\u0000" });
    // reading back (the wire's record cells) does not clean: stored text was cleaned on its way in
    expect(parseJsonText('{"a":"x\\u0000y"}')).toEqual({ a: "x\u0000y" });
  });

  it("refuse an event whose keys become one key once cleaned, naming both and the line", () => {
    // "\u0000id" would become "id" and replace the id sent (or the other way round): data lost
    // without a word, and the event's identity decided by key order
    for (const [line, keys] of [
      ['{"id":"a","\\u0000id":"b"}', /"id" and "\\u0000id"/],
      ['{"m":{"k\\u0000":1,"k":2}}', /"k\\u0000" and "k"/],
      ['{"x":[{"\\ud800k":1,"\\udbffk":2}]}', /"\\ud800k" and "\\udbffk"/],
    ] as const) {
      let err: unknown;
      try {
        parseEvent(line, 7, NOW, "test");
      } catch (e) {
        err = e;
      }
      expect(err, line).toBeInstanceOf(QesError);
      expect((err as QesError).code).toBe("invalid_event");
      expect((err as QesError).message, line).toMatch(/^line 7: the keys /);
      expect((err as QesError).message, line).toMatch(keys);
    }
    // distinct once cleaned: kept
    expect(parseEvent('{"a\\u0000b":1,"ab\\u0000c":2}', 1, NOW, "test")!.body).toEqual({ ab: 1, abc: 2 });
  });
});

describe("source names", () => {
  it("refuse the names of properties every object inherits, naming source_name", () => {
    for (const name of ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf"]) {
      expect(() => checkSourceName(name), name).toThrow(/is reserved/);
    }
    for (const name of ["constructor.logs", "Constructor", "proto", "x"])
      expect(() => checkSourceName(name)).not.toThrow();
  });
});

describe("a shipper's `message` (Vector, syslog, Docker, journald)", () => {
  it("becomes event_message when the event has none, in a load and in ingest alike", () => {
    const loaded = parseEvent(
      '{"message":"GET /x 200","host":"edge-1","source_type":"docker_logs"}',
      1,
      NOW,
      "test",
    )!;
    expect(loaded.body).toEqual({ event_message: "GET /x 200", host: "edge-1", source_type: "docker_logs" });
    for (const absent of [{}, { event_message: null }] as JsonObject[]) {
      const ingested = logEventFromJson({ message: "hello", ...absent }, "vector.logs", NOW);
      expect(ingested.body.event_message).toBe("hello");
      expect(Object.hasOwn(ingested.body, "message")).toBe(false);
    }
  });

  it("keeps both when both are sent, and a message that is not a string stays a field", () => {
    expect(logEventFromJson({ message: "m", event_message: "e" }, "s", NOW).body).toEqual({
      message: "m",
      event_message: "e",
    });
    const structured = parseEvent('{"message":{"text":"t","level":"info"}}', 1, NOW, "test")!;
    expect(structured.body).toEqual({ message: { text: "t", level: "info" } });
    expect(logEventFromJson({ message: 42 }, "s", NOW).body).toEqual({ message: 42 });
  });

  it("derives an id-less event's id from the event as sent, so a retry after the move matches", () => {
    const sent = { message: "retry me", timestamp: "2025-01-15T09:00:00Z" };
    const first = logEventFromJson(structuredClone(sent), "vector.logs", NOW);
    expect(first.id).toBe(contentEventId("vector.logs", structuredClone(sent)));
    expect(logEventFromJson(structuredClone(sent), "vector.logs", NOW).id).toBe(first.id);
    // the same text sent as event_message is another event
    expect(
      logEventFromJson({ event_message: "retry me", timestamp: sent.timestamp }, "vector.logs", NOW).id,
    ).not.toBe(first.id);
  });

  it("numbers repeats of one event within a request, the same way on every retry of it", () => {
    // nginx's access line with its second-resolution time: the same request twice in a second
    const line = {
      event_message: '10.0.0.1 - - [15/Jan/2025:09:00:00 +0000] "GET / HTTP/1.1" 200 5',
      project: "p",
    };
    const request = () => {
      const ids = new RequestEventIds();
      return [line, { event_message: "other" }, line, line, { id: "sent", ...line }].map(
        (e, i) => logEventFromJson(structuredClone(e), "kong", NOW, `event ${i}`, undefined, ids).id,
      );
    };
    const first = request();
    // the first of them keeps the id a lone event has; each repeat gets one of its own
    expect(first[0]).toBe(contentEventId("kong", structuredClone(line)));
    expect(new Set([first[0], first[2], first[3]]).size).toBe(3);
    expect(first[4]).toBe("sent");
    expect(request()).toEqual(first);
  });
});

describe("Logstash's and Filebeat's `@timestamp`", () => {
  it("is the event's time when it has no `timestamp`, in a load and in ingest alike", () => {
    const at = "2025-01-15T09:00:00.123Z";
    expect(parseEvent(JSON.stringify({ "@timestamp": at, message: "m" }), 1, NOW, "test")!.timestamp).toBe(
      1736931600123000n,
    );
    const ingested = logEventFromJson({ "@timestamp": at, event_message: "m" }, "logstash", NOW);
    expect(ingested.timestamp).toBe(1736931600123000n);
    // the field stays as sent
    expect(ingested.body["@timestamp"]).toBe(at);
  });

  it("yields to `timestamp`, and one it cannot read leaves the arrival time instead of refusing", () => {
    expect(
      logEventFromJson({ "@timestamp": "2025-01-15T09:00:00Z", timestamp: "2025-01-16T00:00:00Z" }, "s", NOW)
        .timestamp,
    ).toBe(1736985600000000n);
    expect(logEventFromJson({ "@timestamp": "yesterday" }, "s", NOW).timestamp).toBe(NOW);
    expect(logEventFromJson({ "@timestamp": null }, "s", NOW).timestamp).toBe(NOW);
    // `timestamp` stays this API's own: unreadable, it refuses its event
    expect(() =>
      logEventFromJson({ "@timestamp": "2025-01-15T09:00:00Z", timestamp: "yesterday" }, "s", NOW),
    ).toThrow(/"timestamp" is "yesterday"/);
  });
});
