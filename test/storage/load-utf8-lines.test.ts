import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Backend, QesError } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ndjsonLines } from "../../packages/server/src/cli/ndjson-lines.ts";
import { BACKENDS } from "../support/backends.ts";
import { runSql } from "../support/run-sql.ts";
import { useBackend } from "../support/use-backend.ts";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "qes-utf8-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, bytes: Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

const line = (id: string, message: string) => JSON.stringify({ id, event_message: message });

/**
 * `qes load` reads its file as UTF-8, as the ingest API reads a body: a line that is not UTF-8 is
 * refused with its number, where the stream decoder made each bad byte U+FFFD and the load stored
 * it without a word (a Latin-1 file lost every accented letter; the API answers 400 for the same
 * bytes).
 */
describe.each(BACKENDS)("qes load's lines on $name", (fixture) => {
  let backend: Backend;
  useBackend(fixture, (b) => (backend = b));

  it("refuses a line that is not valid UTF-8, naming it; nothing of the file is stored", async () => {
    const latin1 = Buffer.from(
      `${line("l1", "fine")}\n${line("l2", "also fine")}\n${line("l3", "café")}\n`,
      "latin1",
    );
    const err = await backend
      .load("utf8.refused", ndjsonLines(file("latin1.ndjson", latin1)))
      .catch((e) => e);
    expect(err).toBeInstanceOf(QesError);
    expect(err).toMatchObject({ code: "invalid_event", line: 3 });
    expect((err as QesError).message).toMatch(/^line 3: not valid UTF-8 text/);
    expect((await backend.schema()).sources["utf8.refused"]).toBeUndefined();
  });

  it("reads every line as before: CRLF, a lone CR, a BOM, U+FFFD sent as such, characters cut by a chunk", async () => {
    // a 64 KiB read ends inside a 4-byte character somewhere in the long line
    const long = "😀é€".repeat(30_000);
    const text =
      `\ufeff${line("a", "first")}\r\n${line("b", "\ufffd kept")}\r${line("c", long)}\n\n` +
      `${line("d", "no newline at the end")}`;
    await backend.load("utf8.kept", ndjsonLines(file("kept.ndjson", Buffer.from(text, "utf8"))));
    const rows = await runSql(backend, "select id, event_message from `utf8.kept` order by id");
    expect(rows).toEqual([
      { id: "a", event_message: "first" },
      { id: "b", event_message: "\ufffd kept" },
      { id: "c", event_message: long },
      { id: "d", event_message: "no newline at the end" },
    ]);
  });

  it("drops a byte order mark starting any line, as the ingest API does (files concatenated)", async () => {
    const text = `\ufeff${line("f1", "first file")}\n\ufeff${line("f2", "second file")}\n`;
    await backend.load("utf8.boms", ndjsonLines(file("boms.ndjson", Buffer.from(text, "utf8"))));
    expect(await runSql(backend, "select id from `utf8.boms` order by id")).toEqual([
      { id: "f1" },
      { id: "f2" },
    ]);
  });

  it("counts lines as before: a refusal after CRs and blank lines names the right one", async () => {
    const text = Buffer.concat([
      Buffer.from(`${line("x1", "a")}\r${line("x2", "b")}\r\n\n${line("x3", "c")}\n`),
      Buffer.from([0x7b, 0xff, 0x7d, 0x0a]),
    ]);
    const err = await backend.load("utf8.count", ndjsonLines(file("count.ndjson", text))).catch((e) => e);
    expect(err).toMatchObject({ code: "invalid_event", line: 5 });
  });
});
