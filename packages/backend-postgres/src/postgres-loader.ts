import { finished } from "node:stream/promises";
import {
  type ColumnValue,
  cloneSourceSchema,
  createFlattener,
  type EventFlattener,
  type LoadOptions,
  type LoadSummary,
  type LogEvent,
  nowMicros,
  parseEvent,
  QesError,
  type SchemaChange,
  type SourceSchema,
  widenSchema,
} from "@qes/core";
import type pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import type { ResolvedPostgresConfig } from "./postgres-config.ts";
import { toQesError } from "./postgres-errors.ts";
import { ident, qualified } from "./postgres-sql.ts";
import {
  applySchemaChanges,
  createSource,
  lockSourceForLoad,
  readSource,
  saveSource,
} from "./postgres-storage.ts";

/**
 * Bulk load (DESIGN.md §3, §6): NDJSON lines → core's parse / widen / flatten → COPY, all in
 * one transaction. The input is read once, in batches: a batch that widens the schema first
 * applies the changes (ALTER TABLE, same transaction) and then restarts COPY with the new
 * column list. A malformed line, or a value PostgreSQL refuses, rolls everything back.
 */

const BATCH_EVENTS = 2000;
/** COPY data is sent in chunks of about this many characters */
const CHUNK_CHARS = 1 << 18;

const MICROS_PER_DAY = 86_400_000_000n;

/** COPY text format: backslash, tab, newline and carriage return escaped; NUL cannot be stored. */
function copyText(text: string): string {
  // fast path: most values have nothing to escape
  if (!/[\\\t\n\r\0]/.test(text)) return text;
  return text
    .replaceAll("\\", "\\\\")
    .replaceAll("\t", "\\t")
    .replaceAll("\n", "\\n")
    .replaceAll("\r", "\\r")
    .replaceAll("\0", "");
}

function pad2(n: number): string {
  return n < 10 ? "0" + n : String(n);
}

/**
 * `YYYY-MM-DD HH:MM:SS.ffffff+00` of unix microseconds. The date part is formatted once per day
 * seen (events of a load cluster in few days); the rest is integer arithmetic on numbers.
 */
class TimestampText {
  private day = Number.NaN;
  private dayText = "";

  format(micros: bigint): string {
    let days = micros / MICROS_PER_DAY;
    let within = micros % MICROS_PER_DAY;
    if (within < 0n) {
      within += MICROS_PER_DAY;
      days -= 1n;
    }
    const d = Number(days);
    if (d !== this.day) {
      this.day = d;
      const date = new Date(d * 86_400_000);
      const year = date.getUTCFullYear();
      if (!(year >= 1 && year <= 9999)) throw new RangeError("timestamp out of range");
      this.dayText = `${String(year).padStart(4, "0")}-${pad2(date.getUTCMonth() + 1)}-${pad2(date.getUTCDate())} `;
    }
    const t = Number(within);
    const seconds = Math.floor(t / 1_000_000);
    const fraction = t - seconds * 1_000_000;
    return (
      this.dayText +
      pad2(Math.floor(seconds / 3600)) +
      ":" +
      pad2(Math.floor(seconds / 60) % 60) +
      ":" +
      pad2(seconds % 60) +
      "." +
      String(fraction).padStart(6, "0") +
      "+00"
    );
  }
}

function copyValue(value: ColumnValue): string {
  if (value === null) return "\\N";
  switch (typeof value) {
    case "string":
      return copyText(value);
    case "boolean":
      return value ? "t" : "f";
    default:
      return String(value);
  }
}

/** A COPY … FROM STDIN in progress on the load's connection. */
class CopyWriter {
  private readonly stream: ReturnType<typeof copyFrom>;
  private failure: Error | null = null;
  private pending = "";

  constructor(client: pg.ClientBase, sql: string) {
    this.stream = client.query(copyFrom(sql));
    this.stream.on("error", (e: Error) => {
      this.failure ??= e;
    });
  }

  async write(text: string): Promise<void> {
    this.pending += text;
    if (this.pending.length >= CHUNK_CHARS) await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.pending === "") return;
    const ok = this.stream.write(this.pending);
    this.pending = "";
    if (!ok) {
      await new Promise<void>((resolve, reject) => {
        const onDrain = () => {
          this.stream.off("error", onError);
          resolve();
        };
        const onError = (e: Error) => {
          this.stream.off("drain", onDrain);
          reject(e);
        };
        this.stream.once("drain", onDrain);
        this.stream.once("error", onError);
      });
    }
  }

  async end(): Promise<void> {
    await this.flush();
    this.stream.end();
    await finished(this.stream);
    if (this.failure) throw this.failure;
  }

  /** Sends CopyFail; the server aborts the statement (and with it the transaction). */
  async abort(reason: Error): Promise<void> {
    if (this.stream.destroyed) return;
    this.stream.destroy(reason);
    await finished(this.stream).catch(() => undefined);
  }
}

/** Where a COPY error points: `COPY src_x, line 12, column f3: "…"` → line 12 of that COPY. */
function copyLineOf(e: unknown): number | undefined {
  const where = (e as { where?: unknown }).where;
  const m = typeof where === "string" ? /COPY [^,]+, line (\d+)/.exec(where) : null;
  return m ? Number(m[1]) : undefined;
}

interface LoadContext {
  client: pg.ClientBase;
  config: ResolvedPostgresConfig;
  source: SourceSchema;
}

/** The load of one call, from the transaction's start to its commit. */
class SourceLoad {
  private flattener: EventFlattener;
  private copy: CopyWriter | null = null;
  /** input line of each row of the current COPY, to point a refused value at its line */
  private copyLines: number[] = [];
  private readonly timestamps = new TimestampText();
  private changed = false;

  constructor(private readonly ctx: LoadContext) {
    this.flattener = createFlattener(ctx.source);
  }

  get schemaChanged(): boolean {
    return this.changed;
  }

  /** Writes a batch; `changes` widened the model (in `ctx.source`) since the previous batch. */
  async writeBatch(events: LogEvent[], lines: number[], changes: SchemaChange[]): Promise<void> {
    if (changes.length > 0) {
      await this.endCopy();
      await applySchemaChanges(this.ctx.client, this.ctx.config.schema, this.ctx.source, changes);
      this.flattener = createFlattener(this.ctx.source);
      this.changed = true;
    }
    if (this.copy === null) {
      const columns = this.flattener.columns.map((c) => ident(c.column)).join(", ");
      this.copy = new CopyWriter(
        this.ctx.client,
        `copy ${qualified(this.ctx.config.schema, this.ctx.source.table)} (${columns}) from stdin`,
      );
      this.copyLines = [];
    }
    let text = "";
    for (let i = 0; i < events.length; i++) {
      const event = events[i]!;
      const values = this.flattener.flatten(event);
      let row: string;
      try {
        row = this.timestamps.format(event.timestamp);
      } catch {
        throw new QesError(
          "invalid_event",
          `line ${lines[i]}: "timestamp" is outside the years 0001–9999 that a TIMESTAMP can hold`,
          { line: lines[i]! },
        );
      }
      // fixed columns first: id, timestamp, event_message, project (physicalColumns order)
      row = copyValue(values[0]!) + "\t" + row;
      for (let c = 2; c < values.length; c++) row += "\t" + copyValue(values[c]!);
      text += row + "\n";
      this.copyLines.push(lines[i]!);
    }
    await this.copy.write(text);
  }

  async endCopy(): Promise<void> {
    if (this.copy === null) return;
    const copy = this.copy;
    this.copy = null;
    try {
      await copy.end();
    } catch (e) {
      throw this.refused(e);
    }
  }

  async abort(reason: Error): Promise<void> {
    if (this.copy !== null) await this.copy.abort(reason);
    this.copy = null;
  }

  /** A value PostgreSQL refused is the event's fault: answer invalid_event with its line. */
  private refused(e: unknown): QesError {
    const copyLine = copyLineOf(e);
    const line = copyLine === undefined ? undefined : this.copyLines[copyLine - 1];
    const state = (e as { code?: string }).code ?? "";
    if (line !== undefined && (state.startsWith("22") || state.startsWith("23"))) {
      return new QesError("invalid_event", `line ${line}: ${(e as Error).message}`, { line, cause: e });
    }
    return toQesError(e, "loading events");
  }
}

/**
 * Loads NDJSON lines into one source in one transaction (COPY). Creates the source when new;
 * widens its schema (ALTER TABLE in the same transaction); a malformed line refuses the whole
 * call with QesError('invalid_event', …, {line}) and stores nothing. Returns the source's model
 * as committed.
 */
export async function loadEvents(
  pool: pg.Pool,
  config: ResolvedPostgresConfig,
  sourceName: string,
  lines: AsyncIterable<string> | Iterable<string>,
  opts: LoadOptions = {},
): Promise<{ summary: LoadSummary; source: SourceSchema; schemaChanged: boolean }> {
  if (sourceName.trim() === "" || sourceName.length > 200) {
    throw new QesError("invalid_event", "a source name must be 1 to 200 characters");
  }
  const started = performance.now();
  const now = opts.nowMicros ?? nowMicros();
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (e) {
    throw toQesError(e, "connecting to load events");
  }
  let load: SourceLoad | null = null;
  let broken = false;
  try {
    await client.query("begin");
    await lockSourceForLoad(client, config.schema, sourceName);
    let source = await readSource(client, config.schema, sourceName);
    let created = false;
    if (source === null) {
      await lockSourceForLoad(client, config.schema);
      source =
        (await readSource(client, config.schema, sourceName)) ??
        (await createSource(client, config, sourceName));
      created = true;
    }
    const working = cloneSourceSchema(source);
    load = new SourceLoad({ client, config, source: working });

    let lineNumber = 0;
    let events = 0;
    let bytes = 0;
    let batch: LogEvent[] = [];
    let batchLines: number[] = [];
    let changes: SchemaChange[] = [];
    const flush = async () => {
      await load!.writeBatch(batch, batchLines, changes);
      events += batch.length;
      batch = [];
      batchLines = [];
      changes = [];
      opts.onProgress?.({ events, bytes });
    };
    for await (const line of lines) {
      lineNumber++;
      bytes += Buffer.byteLength(line) + 1;
      const event = parseEvent(line, lineNumber, now);
      if (event === null) continue;
      const widened = widenSchema(working, event.body);
      if (widened.length > 0) changes.push(...widened);
      batch.push(event);
      batchLines.push(lineNumber);
      if (batch.length >= BATCH_EVENTS) await flush();
    }
    if (batch.length > 0 || changes.length > 0) await flush();
    await load.endCopy();
    if (load.schemaChanged) await saveSource(client, config.schema, working);
    await client.query("commit");
    const seconds = (performance.now() - started) / 1000;
    return {
      summary: {
        source: sourceName,
        events,
        seconds,
        eventsPerSecond: seconds > 0 ? events / seconds : events,
      },
      source: working,
      schemaChanged: load.schemaChanged || created,
    };
  } catch (e) {
    const error = e instanceof Error ? e : new Error(String(e));
    try {
      await load?.abort(error);
      await client.query("rollback");
    } catch {
      broken = true;
    }
    throw toQesError(error, "loading events");
  } finally {
    client.release(broken);
  }
}
