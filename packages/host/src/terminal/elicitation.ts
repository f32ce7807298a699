import type { ElicitationHandler } from "@capgate/mcp-client";
import { paint, type TerminalIO } from "./io.js";

/**
 * The CLI's answer to an MCP server's elicitation: on a terminal, the form is asked field
 * by field (defaults shown in brackets; Enter keeps them — the client fills them in), then
 * confirmed; "d" declines and "c" cancels. With no terminal, it is declined and says so.
 * Only form mode is declared, so a URL-mode request never reaches here.
 */
export function terminalElicitation(
  io: TerminalIO,
  beforeAsk?: () => void,
  afterAsk?: () => void,
): ElicitationHandler {
  const p = paint(io);
  return async ({ server, params }) => {
    if (!io.interactive || !io.prompt) {
      io.err(
        `${p.yellow("input requested")} by MCP server ${server}: ${params.message} — declined: no terminal to ask on.`,
      );
      return { action: "decline" };
    }
    const prompt = io.prompt;
    const { elicitationFields, parseElicitationAnswer } = await import("@capgate/mcp-client");
    beforeAsk?.();
    try {
      io.err(`${p.yellow("?")} MCP server ${p.bold(server)} asks: ${params.message}`);
      const content: Record<string, string | number | boolean | string[]> = {};
      for (const field of elicitationFields(params)) {
        const hints = [
          field.choices ? field.choices.map((c, i) => `${i + 1}) ${c.label}`).join(" ") : field.type,
          field.default !== undefined
            ? `default ${String(field.default)}`
            : field.required
              ? "required"
              : "optional",
        ];
        for (;;) {
          const answer = await prompt(
            `  ${field.label}${field.description ? ` — ${field.description}` : ""} (${hints.join(", ")}): `,
          );
          const parsed = parseElicitationAnswer(field, answer);
          if (parsed.ok) {
            if (parsed.value !== undefined) content[field.name] = parsed.value;
            break;
          }
          io.err(`  ${p.yellow(parsed.message)}`);
        }
      }
      const confirm = (await prompt(`  send this to ${server}? [Y]es / [d]ecline / [c]ancel: `)).trim();
      if (/^d/i.test(confirm)) return { action: "decline" };
      if (/^c/i.test(confirm)) return { action: "cancel" };
      return { action: "accept", content };
    } finally {
      afterAsk?.();
    }
  };
}
