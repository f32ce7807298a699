import type { ToolManifest } from "@capgate/schema";
import type { CapabilityEntry } from "./deferred.js";

/**
 * The capabilities a host can dispatch to, indexed by capability and by tool name. An entry
 * is a defined capability or a deferred one (its handlers imported on its first call).
 */
export class CapabilitySet {
  readonly #byName = new Map<string, CapabilityEntry>();
  readonly #byTool = new Map<string, { capability: CapabilityEntry; tool: ToolManifest }>();

  constructor(capabilities: Iterable<CapabilityEntry> = []) {
    for (const c of capabilities) this.add(c);
  }

  add(capability: CapabilityEntry): void {
    const name = capability.manifest.name;
    if (this.#byName.has(name)) throw new Error(`capability '${name}' is already in the set`);
    for (const tool of capability.manifest.tools) {
      const clash = this.#byTool.get(tool.name);
      if (clash)
        throw new Error(`tool '${tool.name}' of '${name}' clashes with '${clash.capability.manifest.name}'`);
    }
    this.#byName.set(name, capability);
    for (const tool of capability.manifest.tools) this.#byTool.set(tool.name, { capability, tool });
  }

  remove(name: string): boolean {
    const c = this.#byName.get(name);
    if (!c) return false;
    this.#byName.delete(name);
    for (const tool of c.manifest.tools) this.#byTool.delete(tool.name);
    return true;
  }

  get(name: string): CapabilityEntry | undefined {
    return this.#byName.get(name);
  }

  list(): CapabilityEntry[] {
    return [...this.#byName.values()];
  }

  /** The capability owning a tool and the tool's manifest. */
  lookup(toolName: string): { capability: CapabilityEntry; tool: ToolManifest } | undefined {
    return this.#byTool.get(toolName);
  }

  toolNames(): string[] {
    return [...this.#byTool.keys()];
  }
}
