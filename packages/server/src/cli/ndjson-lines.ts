import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";

const BOM = 0xfeff;

/**
 * The lines of an NDJSON file (`-`: standard input) for `qes load`, read only once iterated: a
 * readline interface created earlier would emit lines (and close) before anyone listens, and the
 * load would wait forever. A UTF-8 byte order mark before the first line is dropped, as the ingest
 * API drops one before a body: Notepad and PowerShell write it at the start of UTF-8 files, and
 * the first line was refused as "not valid JSON".
 */
export async function* ndjsonLines(file: string): AsyncGenerator<string> {
  const input = file === "-" ? process.stdin : createReadStream(file, { encoding: "utf8" });
  let first = true;
  for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
    yield first && line.charCodeAt(0) === BOM ? line.slice(1) : line;
    first = false;
  }
}
