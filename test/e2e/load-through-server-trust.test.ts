import { execFileSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  readLocalIngestFile,
  writeLocalIngestFile,
} from "../../packages/server/src/ingest/local-ingest-file.ts";
import { type QesProcess, startQes } from "../http/support/qes-process.ts";
import { runCli } from "./support/run-cli.ts";

/**
 * `<database>.serve.json` tells `qes load` and `qes retention` where the serving qes is and gives
 * them its live token. A copy that someone else could have written (mode 0666, a symbolic link,
 * another user's file) chose where a load sent its events — to a stranger answering like qes, the
 * load reporting success — and where retention sent the token. Such a file is refused, naming why.
 */
const QUERY_TOKEN = "trust-query-token-0123456789";
let dir: string;
let env: Record<string, string>;
let server: QesProcess;
let stranger: Server;
let strangerUrl: string;
const received: { url: string; key: string | undefined }[] = [];
let genuine: string;
const serveJson = () => `${env.QES_DUCKDB_PATH}.serve.json`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "qes-forward-trust-"));
  env = {
    QES_DUCKDB_PATH: join(dir, "qes.duckdb"),
    QES_DUCKDB_THREADS: "1",
    QES_API_KEYS: QUERY_TOKEN,
    QES_SEED: "false",
  };
  // answers every POST as the ingest API would, so a load sent here would report success
  stranger = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      received.push({ url: req.url ?? "", key: req.headers["x-api-key"] as string | undefined });
      const accepted = body.split("\n").filter((l) => l !== "").length;
      res
        .writeHead(200, { "Content-Type": "application/json" })
        .end(JSON.stringify({ accepted, sources: [] }));
    });
  });
  await new Promise<void>((r) => stranger.listen(0, "127.0.0.1", r));
  strangerUrl = `http://127.0.0.1:${(stranger.address() as AddressInfo).port}`;
  server = await startQes(env);
  genuine = readFileSync(serveJson(), "utf8");
}, 120_000);
afterAll(async () => {
  await server?.stop("SIGKILL");
  await new Promise<void>((r) => stranger.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  // the server's own file back, as it wrote it
  rmSync(serveJson(), { force: true });
  writeFileSync(serveJson(), genuine, { mode: 0o600 });
  chmodSync(serveJson(), 0o600);
  received.length = 0;
});

/** the server's file, its URL changed to the stranger's (the live token and pid kept) */
function redirected(): string {
  const local = JSON.parse(genuine) as { url: string; token: string; pid: number };
  return `${JSON.stringify({ ...local, url: strangerUrl })}\n`;
}

async function load(): Promise<{ code: number | null; stderr: string }> {
  const file = join(dir, "events.ndjson");
  writeFileSync(
    file,
    `${JSON.stringify({ event_message: "private", timestamp: new Date().toISOString() })}\n`,
  );
  return runCli(["load", "--source", "trust.src", file], { env });
}

describe("qes load and qes retention trust <database>.serve.json only as qes serve leaves it", () => {
  it("the genuine file (mode 0600, the user's own) is used", async () => {
    expect(statSync(serveJson()).mode & 0o777).toBe(0o600);
    const res = await load();
    expect(res.stderr).toContain("sending the events to it");
    expect(res.code).toBe(0);
  });

  it("a file others may write (mode 0666) is refused: the load sends nothing where it says", async () => {
    writeFileSync(serveJson(), redirected());
    chmodSync(serveJson(), 0o666);
    const res = await load();
    expect(received).toEqual([]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/not trusted.*mode is 666/);
  });

  it("qes retention does not send the token where such a file says", async () => {
    writeFileSync(serveJson(), redirected());
    chmodSync(serveJson(), 0o644);
    const res = await runCli(["retention"], { env });
    expect(received).toEqual([]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/not trusted.*mode is 644/);
  });

  it("a symbolic link is refused, even to a private file", async () => {
    const elsewhere = join(dir, "elsewhere.json");
    writeFileSync(elsewhere, redirected(), { mode: 0o600 });
    rmSync(serveJson());
    symlinkSync(elsewhere, serveJson());
    const res = await load();
    expect(received).toEqual([]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/not trusted.*symbolic link/);
  });

  it("a FIFO is refused at once (opening it waited for a writer forever)", async () => {
    rmSync(serveJson());
    execFileSync("mkfifo", ["-m", "600", serveJson()]);
    const res = await load();
    expect(received).toEqual([]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/not trusted.*not a regular file/);
  });

  it("another user's file is refused, even with mode 0600", async () => {
    writeFileSync(serveJson(), redirected(), { mode: 0o600 });
    if (process.getuid?.() === 0) {
      chownSync(serveJson(), 65534, 65534);
      const res = await load();
      expect(received).toEqual([]);
      expect(res.code).toBe(1);
      expect(res.stderr).toMatch(/not trusted.*belongs to user 65534/);
      return;
    }
    // only root gives a file away: a user's own run reads its file as another user's would be read
    const uid = process.getuid!();
    const getuid = vi.spyOn(process, "getuid").mockReturnValue(uid + 1);
    try {
      await expect(readLocalIngestFile(serveJson())).rejects.toThrow(
        new RegExp(`not trusted.*belongs to user ${uid},`),
      );
    } finally {
      getuid.mockRestore();
    }
  });
});

describe("qes serve writes the file", () => {
  it("anew: a link left at its temporary name is not written through, and the file is 0600", async () => {
    const file = join(dir, "other.duckdb.serve.json");
    const victim = join(dir, "victim.txt");
    writeFileSync(victim, "untouched\n", { mode: 0o644 });
    symlinkSync(victim, `${file}.${process.pid}.tmp`);
    await writeLocalIngestFile(file, {
      url: "http://127.0.0.1:1",
      token: "qes_local_secret_token_0123",
      pid: 1,
    });
    expect(readFileSync(victim, "utf8")).toBe("untouched\n");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, "utf8")).toContain("qes_local_secret_token_0123");
  });
});

describe("qes load --url", () => {
  beforeAll(() => writeFileSync(join(dir, "events.ndjson"), `${JSON.stringify({ event_message: "u" })}\n`));

  it("refuses a URL holding a user and password at once, without echoing them", async () => {
    const res = await runCli(
      [
        "load",
        "--url",
        "http://loader:hunter2-secret@127.0.0.1:1",
        "--source",
        "u.src",
        join(dir, "events.ndjson"),
      ],
      {
        env: { ...env, QES_INGEST_TOKEN: "some-ingest-token-0123456789" },
      },
    );
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--url must not hold a user or password/);
    expect(res.stderr + res.stdout).not.toContain("hunter2-secret");
  });

  it("refuses a query string, which was sent in front of the ingest path", async () => {
    const res = await runCli(
      ["load", "--url", `${server.url}/?api_key=x`, "--source", "u.src", join(dir, "events.ndjson")],
      {
        env: { ...env, QES_INGEST_TOKEN: "some-ingest-token-0123456789" },
      },
    );
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/without \?query/);
  });
});
