import { parseArgs } from "node:util";
import { describeError, UsageError } from "./terminal.ts";

const USAGE = `usage: qes <command>

  serve [--demo]                          serve the HTTP API on PORT (seeds sample data into an empty store)
  load --source <name> [--url <server>] <file.ndjson|->…
                                          load NDJSON events into a source (through a running
                                          server's ingest API when it holds the DuckDB file, or --url)
  seed [--events N] [--days D]            add realistic sample events to all nine sources
  endpoints                               list the endpoints with their ids and settings
  check [dir…]                            compile and sandbox-check every endpoint definition
  retention                               remove events older than QES_RETENTION_DAYS once (for cron)

Configuration comes from the environment (see README.md).`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  // `qes load --help` is a question, not a mistake
  if (command !== undefined && (rest.includes("--help") || rest.includes("-h"))) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  switch (command) {
    case "serve": {
      const { values } = parseArgs({ args: rest, options: { demo: { type: "boolean", default: false } } });
      const { serveCommand } = await import("./commands/serve.ts");
      return serveCommand({ demo: values.demo === true });
    }
    case "load": {
      const { values, positionals } = parseArgs({
        args: rest,
        options: { source: { type: "string", short: "s" }, url: { type: "string" } },
        allowPositionals: true,
      });
      const { loadCommand } = await import("./commands/load.ts");
      return loadCommand(values.source, positionals, values.url !== undefined ? { url: values.url } : {});
    }
    case "seed": {
      const { values } = parseArgs({
        args: rest,
        options: { events: { type: "string" }, days: { type: "string" }, seed: { type: "string" } },
      });
      const { seedCommand } = await import("./commands/seed.ts");
      return seedCommand(values);
    }
    case "endpoints": {
      parseArgs({ args: rest, options: {} });
      const { endpointsCommand } = await import("./commands/endpoints.ts");
      return endpointsCommand();
    }
    case "check": {
      const { positionals } = parseArgs({ args: rest, options: {}, allowPositionals: true });
      const { checkCommand } = await import("./commands/check.ts");
      return checkCommand(positionals);
    }
    case "retention": {
      parseArgs({ args: rest, options: {} });
      const { retentionCommand } = await import("./commands/retention.ts");
      return retentionCommand();
    }
    case undefined:
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(`${USAGE}\n`);
      return command === undefined ? 2 : 0;
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    const parseArgsError = (e as { code?: string }).code?.startsWith("ERR_PARSE_ARGS") === true;
    const usage = e instanceof UsageError || parseArgsError;
    // a mistyped option is the user's: its message, not node's stack
    process.stderr.write(`qes: ${parseArgsError ? (e as Error).message : describeError(e)}\n`);
    if (usage) process.stderr.write(`\n${USAGE}\n`);
    process.exitCode = usage ? 2 : 1;
  },
);
