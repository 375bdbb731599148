/**
 * A piece of upkeep the server runs at start-up and then every `everyMs` (retention, statistics):
 * a run under way is joined, never started twice; the timer never keeps the process alive;
 * `close()` stops the timer and waits for a run under way. `once` must not reject: a failed run
 * is its own to log, and the next one tries again.
 */
export class PeriodicRun<T> {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<T> | undefined;

  constructor(
    private readonly everyMs: number,
    private readonly once: () => Promise<T>,
  ) {}

  /** The first run now (the returned promise settles when it ends), then one every period. */
  start(): Promise<T> {
    const first = this.run();
    this.#timer = setInterval(() => void this.run(), this.everyMs);
    this.#timer.unref();
    return first;
  }

  /** One run; a run already under way is joined, not repeated. */
  run(): Promise<T> {
    this.#running ??= this.once().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#running;
  }
}
