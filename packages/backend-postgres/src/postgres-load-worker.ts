import { parentPort } from "node:worker_threads";
import { BatchEncoder } from "./postgres-load-batch.ts";
import type { WorkerMessage, WorkerReply } from "./postgres-load-workers.ts";

/** Entry of a load worker: encodes batches against the latest schema it was sent. */
let encoder: BatchEncoder | null = null;
const utf8 = new TextEncoder();

parentPort!.on("message", (message: WorkerMessage) => {
  if (message.type === "schema") {
    encoder = new BatchEncoder(message.source, message.version);
    return;
  }
  let reply: WorkerReply;
  const transfer: ArrayBuffer[] = [];
  try {
    const batch = encoder!.encode(message.lines, message.firstLine, message.now);
    // UTF-8 here, handed over without a copy: the loader's thread writes the bytes as they are
    for (const day of batch.days) {
      const bytes = utf8.encode(day.text as string);
      day.text = bytes;
      transfer.push(bytes.buffer as ArrayBuffer);
    }
    reply = { id: message.id, batch };
  } catch (e) {
    transfer.length = 0;
    reply = { id: message.id, error: e instanceof Error ? e.message : String(e) };
  }
  parentPort!.postMessage(reply, transfer);
});
