import { QesError } from "../errors.ts";
import type { EndpointDefinition } from "./endpoint-definition.ts";
import { isUuid } from "./endpoint-json.ts";

/** The loaded endpoints, looked up by UUID (any case) or by name. */
export class EndpointRegistry {
  readonly #byName = new Map<string, EndpointDefinition>();
  readonly #byId = new Map<string, EndpointDefinition>();

  constructor(definitions: Iterable<EndpointDefinition>) {
    for (const def of definitions) {
      const id = def.id.toLowerCase();
      const clash = this.#byId.get(id);
      if (clash) {
        throw new QesError(
          "invalid_config",
          `${jsonFileOf(def)}: "id" ${def.id} is already used by endpoint ${clash.name} (${jsonFileOf(clash)})`,
          { file: jsonFileOf(def), param: "id" },
        );
      }
      if (this.#byName.has(def.name)) {
        throw new QesError("invalid_config", `${def.sqlFile}: endpoint name ${def.name} is defined twice`, {
          file: def.sqlFile,
        });
      }
      this.#byId.set(id, def);
      this.#byName.set(def.name, def);
    }
  }

  /** the endpoint whose UUID or name is `idOrName`, or undefined */
  get(idOrName: string): EndpointDefinition | undefined {
    if (isUuid(idOrName)) return this.#byId.get(idOrName.toLowerCase());
    return this.#byName.get(idOrName);
  }

  /** every endpoint, sorted by name */
  list(): EndpointDefinition[] {
    return [...this.#byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  get size(): number {
    return this.#byName.size;
  }
}

function jsonFileOf(def: EndpointDefinition): string {
  return def.sqlFile.replace(/\.sql$/, ".json");
}
