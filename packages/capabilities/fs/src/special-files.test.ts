import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type Fixture, makeFixture } from "./test-support.js";

// FIFOs and sockets in the workspace (a model can make them with the shell). Opening a FIFO
// with no writer the ordinary way blocks a thread of Node's shared I/O pool forever; the
// fs tools must answer at once with what the path is, and the pool must stay usable.

let fx: Fixture;
let socketServer: Server;

beforeAll(async () => {
  fx = makeFixture();
  for (const name of ["pipe", "pipe2", "pipe3", "pipe4", "pipe5"])
    execFileSync("mkfifo", [join(fx.ws, name)]);
  writeFileSync(join(fx.ws, "normal.txt"), "hello\nneedle here\n");
  socketServer = createServer();
  await new Promise<void>((resolve) => socketServer.listen(join(fx.ws, "sock"), resolve));
});
afterAll(async () => {
  await new Promise((resolve) => socketServer.close(resolve));
  fx.cleanup();
});

describe("special files are refused by type, never opened for reading", () => {
  it("fs.read of FIFOs and a socket fails at once naming the type — many at once, then a normal read works", async () => {
    const calls = [];
    for (let i = 0; i < 8; i++) {
      calls.push(call(fx.ctx, "fs.read", { path: i % 2 ? "pipe" : "pipe2" }));
      calls.push(call(fx.ctx, "fs.patch", { path: i % 2 ? "pipe3" : "pipe4", old: "a", new: "b" }));
    }
    const results = await Promise.all(calls);
    for (const r of results) {
      expect(r.success).toBe(false);
      expect(r.summary).toMatch(/^pipe\d? is a named pipe \(FIFO\), not a regular file/);
      expect(r.data).toMatchObject({ type: "fifo" });
    }
    const sock = await call(fx.ctx, "fs.read", { path: "sock" });
    expect(sock).toMatchObject({ success: false, data: { type: "socket" } });
    expect(sock.summary).toMatch(/sock is a socket, not a regular file/);
    // The I/O pool is free: a real read still answers.
    const normal = await call(fx.ctx, "fs.read", { path: "normal.txt" });
    expect(normal.success).toBe(true);
    expect(normal.summary).toContain("needle here");
  });

  it("fs.write onto a FIFO is refused and the FIFO stays; fs.stat reports the type; fs.list lists it", async () => {
    const w = await call(fx.ctx, "fs.write", { path: "pipe5", content: "x" });
    expect(w.success).toBe(false);
    expect(w.summary).toMatch(/pipe5 exists and is a named pipe \(FIFO\)/);
    const stat = await call(fx.ctx, "fs.stat", { path: "pipe5" });
    expect(stat).toMatchObject({ success: true, data: { type: "fifo", exists: true } });
    expect((await call(fx.ctx, "fs.stat", { path: "sock" })).data).toMatchObject({ type: "socket" });
    const list = await call(fx.ctx, "fs.list", {});
    expect(list.summary).toContain("pipe5 (special file: fifo, not opened)");
    expect(list.summary).toContain("sock (special file: socket, not opened)");
  });

  it("a FIFO named .gitignore (or .git/info/exclude) does not block fs.search or fs.glob", async () => {
    const { mkdirSync } = await import("node:fs");
    mkdirSync(join(fx.ws, ".git", "info"), { recursive: true });
    mkdirSync(join(fx.ws, "sub"));
    execFileSync("mkfifo", [join(fx.ws, ".git", "info", "exclude")]);
    execFileSync("mkfifo", [join(fx.ws, "sub", ".gitignore")]);
    writeFileSync(join(fx.ws, "sub", "found.txt"), "needle below\n");
    const found = await call(fx.ctx, "fs.search", { pattern: "needle below", path: "sub" });
    expect(found.summary).toContain("sub/found.txt:1: needle below");
    const glob = await call(fx.ctx, "fs.glob", { pattern: "*.txt", path: "sub" });
    expect((glob.data as { files: string[] }).files).toEqual(["sub/found.txt"]);
  });

  it("fs.search skips special files while walking and refuses one named as path; fs.glob lists only files", async () => {
    const all = await call(fx.ctx, "fs.search", { pattern: "needle" });
    expect(all.success).toBe(true);
    expect(all.summary).toContain("normal.txt:2: needle here");
    const one = await call(fx.ctx, "fs.search", { pattern: "x", path: "pipe" });
    expect(one).toMatchObject({ success: false, data: { type: "fifo" } });
    const glob = await call(fx.ctx, "fs.glob", { pattern: "*" });
    expect((glob.data as { files: string[] }).files).toEqual(["normal.txt", "sub/found.txt"]);
  });
});
