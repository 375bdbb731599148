import type { Backend } from "@qes/core";
import { afterAll, beforeAll } from "vitest";
import type { BackendFixture, BackendHandle } from "./backends.ts";

/**
 * A fresh store of `fixture` for the enclosing `describe`: created before its tests, disposed
 * after them. `ready` is handed the backend once it is up (and may seed it); the suites over
 * `BACKENDS` each repeated these hooks.
 */
export function useBackend(
  fixture: BackendFixture,
  ready: (backend: Backend, handle: BackendHandle) => unknown = () => {},
): void {
  let handle: BackendHandle | undefined;
  beforeAll(async () => {
    handle = await fixture.create();
    await ready(handle.backend, handle);
  });
  afterAll(async () => handle?.dispose());
}
