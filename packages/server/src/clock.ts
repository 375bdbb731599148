/** unix microseconds now */
export type Clock = () => bigint;

/** The request clock: the pinned instant when one is configured (tests), else the system clock in µs. */
export function requestClock(pinnedMicros?: bigint): Clock {
  if (pinnedMicros !== undefined) return () => pinnedMicros;
  return () => BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000));
}
