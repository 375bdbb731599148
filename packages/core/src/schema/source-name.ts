import { QesError } from "../errors.ts";

/** control characters (NUL included): no engine stores them all, and no log source is named with them */
export function hasControlCharacter(name: string): boolean {
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/**
 * The rule for a source's name, the same for `qes load` and ingest on every backend: 1 to 200
 * characters, not only spaces, no control characters, and not the name of a property every
 * JavaScript object has (`constructor`, `toString`, `__proto__`, …): the schema model keys its
 * sources by name, and such a name found the inherited property instead (DuckDB and ClickHouse
 * answered 500; PostgreSQL acknowledged `__proto__` and then knew no such source). The name is
 * data (a row of the schema model) and its table name is derived (schema-model.ts), so any other
 * character is fine. Throws QesError('invalid_parameter', …, {param: "source_name"}).
 */
export function checkSourceName(name: string): void {
  if (name in Object.prototype) {
    throw new QesError(
      "invalid_parameter",
      `source name ${JSON.stringify(name)} is reserved (every JavaScript object has a property of that name); choose another`,
      { param: "source_name" },
    );
  }
  if (name.trim() === "" || name.length > 200 || hasControlCharacter(name)) {
    throw new QesError(
      "invalid_parameter",
      "a source name must be 1 to 200 characters, not only spaces, without control characters",
      { param: "source_name" },
    );
  }
}

/** whether `qes load` and ingest would create a source of this name */
export function isCreatableSourceName(name: string): boolean {
  try {
    checkSourceName(name);
    return true;
  } catch {
    return false;
  }
}
