import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { join } from "node:path";
import { REPO_ROOT } from "./run-cli.ts";

/**
 * Another process holding a DuckDB file (one writer per file), as a `qes serve` does, but without
 * its ingest API: resolves once the store is open. The caller kills it.
 */
export async function holdDuckdbStore(path: string): Promise<ChildProcessWithoutNullStreams> {
  const index = join(REPO_ROOT, "packages/backend-duckdb/src/index.ts");
  const holder = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "-e",
      `const { createDuckdbBackend } = await import(${JSON.stringify(index)});\n` +
        `const b = createDuckdbBackend({ path: ${JSON.stringify(path)} });\n` +
        `await b.init();\nprocess.stdout.write("held\\n");\nsetInterval(() => {}, 1000);`,
    ],
    { cwd: REPO_ROOT },
  );
  await new Promise<void>((resolve, reject) => {
    let out = "";
    holder.stdout.setEncoding("utf8").on("data", (c: string) => {
      out += c;
      if (out.includes("held")) resolve();
    });
    holder.on("exit", () => reject(new Error(`the holder exited: ${out}`)));
  });
  return holder;
}
