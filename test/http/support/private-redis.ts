import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort } from "./ports.ts";

/**
 * A redis-server of the test's own on a free loopback port (DESIGN.md §9: tests that stop a
 * server never stop the shared one). No persistence: a restart comes back empty, as after a crash.
 */
export class PrivateRedis {
  readonly port: number;
  readonly #dir: string;
  #child: ChildProcess | undefined;

  private constructor(port: number) {
    this.port = port;
    this.#dir = mkdtempSync(join(tmpdir(), "qes-redis-"));
  }

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.restart();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** starts the server (again) on the same port and waits until it answers PING */
  async restart(): Promise<void> {
    if (this.#running()) throw new Error("redis-server is running");
    this.#child = spawn(
      "redis-server",
      [
        "--port",
        String(this.port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        this.#dir,
      ],
      { stdio: "ignore" },
    );
    const deadline = Date.now() + 10_000;
    for (;;) {
      const client = new Redis(this.url, {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      client.on("error", () => undefined);
      try {
        await client.connect();
        if ((await client.ping()) === "PONG") {
          client.disconnect();
          return;
        }
      } catch {
        client.disconnect();
      }
      if (Date.now() > deadline) throw new Error(`redis-server did not start on port ${this.port}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** SIGKILL, as a crash: no goodbye to clients */
  async kill(): Promise<void> {
    const child = this.#child;
    if (!child || !this.#running()) return;
    await new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.kill("SIGKILL");
    });
  }

  #running(): boolean {
    const child = this.#child;
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.#dir, { recursive: true, force: true });
  }
}
