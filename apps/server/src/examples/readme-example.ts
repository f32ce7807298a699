// The README example (there imported as @capgate/server), kept as a file so the typecheck covers it.
import { closeOnSignals, startServer } from "../index.js";

export async function example(): Promise<void> {
  // scriptedModelsDir: the only place POST /runs may take `scripted:<file>` models from.
  const server = await startServer({
    port: 7777,
    workspace: process.cwd(),
    scriptedModelsDir: process.cwd(),
  });
  closeOnSignals(server); // SIGTERM/SIGINT: abort runs, close MCP sessions and the browser, exit 0
  console.log(`viewer: ${server.viewerUrl}`);

  const headers = { authorization: `Bearer ${server.token}`, "content-type": "application/json" };
  const call = await fetch(`${server.url}/tools/call`, {
    method: "POST",
    headers,
    body: JSON.stringify({ tool: "fs.list", arguments: { path: "." } }),
  });
  console.log(call.status, await call.json()); // 200 { success, summary, data, via: "native" }

  const run = await fetch(`${server.url}/runs`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      goal: "list the files and summarise the README",
      model: "scripted:./script.json",
    }),
  });
  const { id } = (await run.json()) as { id: string };
  console.log(`follow it: curl -N -H 'authorization: Bearer …' ${server.url}/runs/${id}/events`);
}
