import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP proxy on a free loopback port in front of a real server. `cut()` drops every connection
 * and refuses new ones — the backend becomes unreachable exactly as over a broken network —
 * `restore()` accepts again.
 */
export class TcpProxy {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #cut = false;
  port = 0;

  private constructor(targetHost: string, targetPort: number) {
    this.#server = createServer((client) => {
      if (this.#cut) {
        client.destroy();
        return;
      }
      const upstream = connect(targetPort, targetHost);
      for (const s of [client, upstream]) {
        this.#sockets.add(s);
        s.on("close", () => this.#sockets.delete(s));
        s.on("error", () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
  }

  static async start(targetHost: string, targetPort: number): Promise<TcpProxy> {
    const proxy = new TcpProxy(targetHost, targetPort);
    await new Promise<void>((resolve) => proxy.#server.listen(0, "127.0.0.1", resolve));
    proxy.port = (proxy.#server.address() as { port: number }).port;
    return proxy;
  }

  cut(): void {
    this.#cut = true;
    for (const s of this.#sockets) s.destroy();
  }

  restore(): void {
    this.#cut = false;
  }

  close(): Promise<void> {
    this.cut();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}
