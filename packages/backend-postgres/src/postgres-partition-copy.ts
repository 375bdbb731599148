import { finished } from "node:stream/promises";
import type pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { ident, qualified } from "./postgres-sql.ts";

/** A COPY … FROM STDIN in progress on a connection. */
export class CopyWriter {
  private readonly stream: ReturnType<typeof copyFrom>;
  private failure: Error | null = null;

  constructor(client: pg.ClientBase, sql: string) {
    // a deep buffer lets parsing run ahead while the server consumes the previous chunks
    this.stream = client.query(copyFrom(sql, { highWaterMark: 1 << 22 }));
    this.stream.on("error", (e: Error) => {
      this.failure ??= e;
    });
  }

  async write(data: string | Uint8Array): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.stream.write(data)) return;
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

  async end(): Promise<void> {
    if (this.failure) throw this.failure;
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

/**
 * COPYs rows of one day straight into the partition that holds it (`DayPartitions`), in one
 * statement; a failure ends the COPY (CopyFail) and is thrown as PostgreSQL reported it.
 */
export async function copyIntoPartition(
  client: pg.ClientBase,
  schema: string,
  partition: string,
  columns: readonly string[],
  chunks: readonly (string | Uint8Array)[],
): Promise<void> {
  const copy = new CopyWriter(
    client,
    `copy ${qualified(schema, partition)} (${columns.map(ident).join(", ")}) from stdin`,
  );
  try {
    for (const chunk of chunks) await copy.write(chunk);
    await copy.end();
  } catch (e) {
    await copy.abort(e instanceof Error ? e : new Error(String(e)));
    throw e;
  }
}
