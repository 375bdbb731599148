/**
 * Starts iterating NDJSON lines now, before the first `await` of a load. A `readline` interface
 * emits lines as soon as its stream flows; lines emitted before its async iterator exists are
 * lost, so a load that awaits anything (a transaction, a lock, a queue) before `for await` would
 * silently drop the first lines.
 */
export function iterateLinesNow(lines: AsyncIterable<string> | Iterable<string>): AsyncIterable<string> {
  const iterator: AsyncIterator<string> | Iterator<string> =
    Symbol.asyncIterator in lines ? lines[Symbol.asyncIterator]() : lines[Symbol.iterator]();
  let taken = false;
  return {
    [Symbol.asyncIterator]() {
      if (taken) throw new Error("lines can be iterated once");
      taken = true;
      return {
        next: async () => iterator.next(),
        return: async (value?: unknown) => {
          await iterator.return?.(value);
          return { done: true, value: undefined };
        },
      };
    },
  };
}
