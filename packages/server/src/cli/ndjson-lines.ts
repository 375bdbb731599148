import { createReadStream } from "node:fs";
import { QesError } from "@qes/core";

const BOM = 0xfeff;
const LF = 0x0a;
const CR = 0x0d;

/**
 * The lines of an NDJSON file (`-`: standard input) for `qes load`, read only once iterated: a
 * reader created earlier would take the stream's data (and its end) before anyone listens, and the
 * load would wait forever. A UTF-8 byte order mark starting a line is dropped, as the ingest API
 * drops one before a body and before each line: Notepad and PowerShell write it at the start of
 * UTF-8 files (the first line was refused as "not valid JSON"), and files concatenated
 * (`cat a b | qes load -`) carry one before each file's first line.
 *
 * A line that is not valid UTF-8 is refused with QesError('invalid_event', …, {line}), as the
 * ingest API refuses such a body: decoded as a stream, each bad byte became U+FFFD and was stored
 * without a word (a Latin-1 log file lost every accented letter). Lines end at `\n`, `\r\n` or a
 * lone `\r`, as readline ended them (so line numbers are unchanged).
 */
export async function* ndjsonLines(file: string): AsyncGenerator<string> {
  const input: AsyncIterable<Buffer | string> = file === "-" ? process.stdin : createReadStream(file);
  let line = 0;
  /** the lines of `bytes`, which hold whole lines (the last one's end cut off) */
  const lines = function* (bytes: Uint8Array): Generator<string> {
    for (const piece of decode(bytes, line).split("\n")) {
      const ended = piece.endsWith("\r") ? piece.slice(0, -1) : piece;
      // a lone CR ends a line too (readline's rule); a JSON text never holds one unescaped
      for (const part of ended.includes("\r") ? ended.split("\r") : [ended]) {
        line++;
        yield part.charCodeAt(0) === BOM ? part.slice(1) : part;
      }
    }
  };
  /** bytes of the line not yet ended, from earlier chunks */
  let pending: Buffer[] = [];
  for await (const chunk of input) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    const last = bytes.lastIndexOf(LF);
    if (last === -1) {
      pending.push(bytes);
      continue;
    }
    const head = bytes.subarray(0, last);
    const whole = pending.length === 0 ? head : Buffer.concat([...pending, head]);
    pending = last + 1 < bytes.length ? [bytes.subarray(last + 1)] : [];
    yield* lines(whole);
  }
  // the last line, without its end (a final CR is its end, as `lines` reads it)
  if (pending.length > 0) yield* lines(Buffer.concat(pending));
}

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * `bytes` (whole lines) as text, decoded at once; when they are not UTF-8, a QesError naming the
 * first line that is not (`before`: the lines before `bytes`), counted as `ndjsonLines` counts.
 */
function decode(bytes: Uint8Array, before: number): string {
  try {
    return decoder.decode(bytes);
  } catch {
    let line = before;
    let start = 0;
    while (start <= bytes.length) {
      let end = bytes.indexOf(LF, start);
      if (end === -1) end = bytes.length;
      const stop = end > start && bytes[end - 1] === CR ? end - 1 : end;
      // CR is one byte in UTF-8, never inside a character: the lines a lone CR ends split here
      for (let from = start; from <= stop; ) {
        let to = bytes.indexOf(CR, from);
        if (to === -1 || to > stop) to = stop;
        line++;
        try {
          decoder.decode(bytes.subarray(from, to));
        } catch {
          throw new QesError(
            "invalid_event",
            `line ${line}: not valid UTF-8 text (as the ingest API, qes load takes UTF-8 only: convert the file, e.g. with iconv)`,
            { line },
          );
        }
        from = to + 1;
        if (to === stop) break;
      }
      start = end + 1;
    }
    // not reached: some line failed to decode above
    throw new QesError("invalid_event", "not valid UTF-8 text");
  }
}
