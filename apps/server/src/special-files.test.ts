import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServerProcess, startServerProcess } from "./test-support/server-process.js";

// Issue 9 §6: fs.read/fs.patch on FIFOs used to park threads of Node's shared I/O pool
// forever; four such calls starved the server while /healthz still said 200. Through the
// real server process, many at once must fail promptly and a normal read must still work.

let server: ServerProcess;

beforeAll(async () => {
  server = await startServerProcess({ files: { "hello.txt": "hello from a file\n" } });
  for (let i = 0; i < 8; i++) execFileSync("mkfifo", [join(server.workspace, `pipe${i}`)]);
}, 180_000);

afterAll(async () => {
  await server?.stop();
  server?.cleanup();
});

interface CallJson {
  success: boolean;
  summary: string;
  data?: { type?: string };
}

describe("FIFOs through /tools/call", () => {
  it("8 parallel fs.read and 8 fs.patch calls on FIFOs fail with the type; fs.read still works afterwards", async () => {
    const calls: Promise<Response>[] = [];
    for (let i = 0; i < 8; i++) {
      calls.push(server.api("/tools/call", { body: { tool: "fs.read", arguments: { path: `pipe${i}` } } }));
      calls.push(
        server.api("/tools/call", {
          body: { tool: "fs.patch", arguments: { path: `pipe${i}`, old: "a", new: "b" } },
        }),
      );
    }
    for (const response of await Promise.all(calls)) {
      expect(response.status).toBe(200);
      const json = (await response.json()) as CallJson;
      expect(json.success).toBe(false);
      expect(json.summary).toMatch(/^pipe\d is a named pipe \(FIFO\), not a regular file/);
      expect(json.data?.type).toBe("fifo");
    }
    const normal = await server.api("/tools/call", {
      body: { tool: "fs.read", arguments: { path: "hello.txt" } },
    });
    const json = (await normal.json()) as CallJson;
    expect(json.success).toBe(true);
    expect(json.summary).toContain("hello from a file");
  }, 30_000);
});
