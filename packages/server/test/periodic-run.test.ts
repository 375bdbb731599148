import { describe, expect, it } from "vitest";
import { PeriodicRun } from "../src/periodic-run.ts";

describe("PeriodicRun", () => {
  it("joins a run under way instead of starting a second, and runs again once it has ended", async () => {
    let started = 0;
    let finish: (() => void) | undefined;
    const periodic = new PeriodicRun(3_600_000, async () => {
      started++;
      await new Promise<void>((r) => {
        finish = r;
      });
      return started;
    });
    const first = periodic.start();
    const joined = periodic.run();
    expect(started).toBe(1);
    finish!();
    expect(await first).toBe(1);
    expect(await joined).toBe(1);
    const second = periodic.run();
    expect(started).toBe(2);
    finish!();
    expect(await second).toBe(2);
    await periodic.close();
  });

  it("runs every period after the first, and close() stops it and waits for a run under way", async () => {
    let runs = 0;
    let release: (() => void) | undefined;
    const periodic = new PeriodicRun(20, async () => {
      runs++;
      if (runs === 3) await new Promise<void>((r) => (release = r));
    });
    await periodic.start();
    for (const deadline = Date.now() + 5000; runs < 3 && Date.now() < deadline; )
      await new Promise((r) => setTimeout(r, 5));
    expect(runs).toBe(3);
    let closed = false;
    const closing = periodic.close().then(() => (closed = true));
    await new Promise((r) => setTimeout(r, 60));
    expect(closed).toBe(false);
    release!();
    await closing;
    const after = runs;
    await new Promise((r) => setTimeout(r, 80));
    expect(runs).toBe(after);
  });
});
