import { defineCapability, type MemoryEntry, type MemoryService, type ToolContext } from "@capgate/tools";
import { manifest } from "./manifest.js";

function memoryOf(ctx: ToolContext): MemoryService {
  const memory = ctx.services.memory;
  if (!memory) throw new Error("memory is not available in this host (it provides no memory service)");
  return memory;
}

function line(entry: MemoryEntry): string {
  const tags = entry.tags.length > 0 ? ` [${entry.tags.join(", ")}]` : "";
  return `${entry.id} (${entry.createdAt.slice(0, 10)})${tags}: ${entry.text}`;
}

/** memory.*: the write side of memory, a thin layer over the host's memory service. */
export const capability = defineCapability({
  manifest,
  handlers: {
    remember: async (args, ctx) => {
      const entry = await memoryOf(ctx).remember({
        text: args.text,
        tags: args.tags ?? [],
        source: "remember",
      });
      return { success: true, summary: `Remembered as ${entry.id}.`, data: entry };
    },
    forget: async (args, ctx) => {
      const removed = await memoryOf(ctx).forget(args.id);
      return removed
        ? { success: true, summary: `Forgot ${args.id}.` }
        : { success: false, summary: `No note has id '${args.id}'. Use memory.list to see ids.` };
    },
    list: async (args, ctx) => {
      const entries = await memoryOf(ctx).list(args.limit ?? 20);
      if (entries.length === 0) return { success: true, summary: "No notes yet.", data: [] };
      return { success: true, summary: entries.map(line).join("\n"), data: entries };
    },
  },
});
