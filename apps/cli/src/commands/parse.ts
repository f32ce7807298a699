import { parseToolAction } from "@capgate/schema";
import { CliError } from "../errors.js";
import { type CliIO, paint } from "../io.js";
import { printJson } from "../json.js";

export async function parseCommand(
  text: string | undefined,
  options: { json?: boolean },
  io: CliIO,
): Promise<number> {
  const input = text ?? (await readStdin());
  if (input === undefined)
    throw new CliError("nothing to parse", 2, "pass the model output as an argument or on stdin");
  const result = parseToolAction(input);
  if (options.json) {
    printJson(io, result);
    return result.ok ? 0 : 1;
  }
  const p = paint(io);
  if (result.ok) {
    io.out(`${p.green("ok")} ${p.bold(result.action.name)} ${JSON.stringify(result.action.arguments)}`);
    return 0;
  }
  const where = result.error.property ? ` ${p.dim(`at ${result.error.property}`)}` : "";
  io.err(`${p.red(result.error.code)}${where}: ${result.error.message}`);
  return 1;
}

async function readStdin(): Promise<string | undefined> {
  if (process.stdin.isTTY) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
