import { parentPort } from "node:worker_threads";
import { BatchEncoder } from "./postgres-load-batch.ts";
import type { WorkerMessage, WorkerReply } from "./postgres-load-workers.ts";

/** Entry of a load worker: encodes batches against the latest schema it was sent. */
let encoder: BatchEncoder | null = null;

parentPort!.on("message", (message: WorkerMessage) => {
  if (message.type === "schema") {
    encoder = new BatchEncoder(message.source, message.version);
    return;
  }
  let reply: WorkerReply;
  try {
    reply = { id: message.id, batch: encoder!.encode(message.lines, message.firstLine, message.now) };
  } catch (e) {
    reply = { id: message.id, error: e instanceof Error ? e.message : String(e) };
  }
  parentPort!.postMessage(reply);
});
