import type { ToolManifest } from "@capgate/schema";
import type { Capability } from "./define.js";

/** The capabilities a host can dispatch to, indexed by capability and by tool name. */
export class CapabilitySet {
  readonly #byName = new Map<string, Capability>();
  readonly #byTool = new Map<string, { capability: Capability; tool: ToolManifest }>();

  constructor(capabilities: Iterable<Capability> = []) {
    for (const c of capabilities) this.add(c);
  }

  add(capability: Capability): void {
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

  get(name: string): Capability | undefined {
    return this.#byName.get(name);
  }

  list(): Capability[] {
    return [...this.#byName.values()];
  }

  /** The capability owning a tool and the tool's manifest. */
  lookup(toolName: string): { capability: Capability; tool: ToolManifest } | undefined {
    return this.#byTool.get(toolName);
  }

  toolNames(): string[] {
    return [...this.#byTool.keys()];
  }
}
