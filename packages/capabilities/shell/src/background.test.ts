import { existsSync } from "node:fs";
import { BACKGROUND_PROCESSES_KEY } from "@capgate/sandbox";
import { afterAll, describe, expect, it } from "vitest";
import { createShellTestHost, treeMembers, waitFor } from "./test-support.js";

const host = createShellTestHost();
afterAll(() => host.close());

interface Info {
  id: string;
  pid: number;
  running: boolean;
  exitCode: number | null;
  output?: string;
}

const hasProc = existsSync("/proc/self/stat");

async function outputOf(id: string, tail_lines?: number) {
  const r = await host.call("shell.output", { id, ...(tail_lines ? { tail_lines } : {}) });
  return { ...r, info: r.data as Info };
}

describe("background processes: shell.start → shell.output → shell.stop", () => {
  it("start returns an id at once; output shows the last lines and the state; stop ends the whole group", async () => {
    // A parent with two grandchildren, printing, then waiting forever.
    const started = await host.call("shell.start", {
      command: "sleep 300 & sleep 300 & for i in 1 2 3 4 5; do echo line$i; done; wait",
    });
    expect(started.success).toBe(true);
    const info = started.data as Info;
    expect(info.id).toMatch(/^p\d+$/);
    expect(info.running).toBe(true);
    expect(started.summary).toContain(`shell.output {"id":"${info.id}"}`);

    const out = await waitFor(async () => {
      const o = await outputOf(info.id, 2);
      return o.summary.includes("line5") ? o : undefined;
    }, "line5");
    expect(out.success).toBe(true);
    expect(out.info.running).toBe(true);
    expect(out.summary).toContain(`${info.id} is running (pid ${info.pid})`);
    expect(out.summary).toMatch(/--- output, last 2 lines \(stdout\+stderr\) ---\nline4\nline5$/);
    expect(out.info.output).toBe("line4\nline5\n");

    if (hasProc) expect(treeMembers(info.pid).length).toBeGreaterThanOrEqual(3);
    const stopped = await host.call("shell.stop", { id: info.id });
    expect(stopped.success).toBe(true);
    expect(stopped.summary).toMatch(
      new RegExp(`^Stopped ${info.id} and its child processes \\(killed by SIGTERM\\)`),
    );
    expect(stopped.summary).toContain("line5");
    // Grandchildren (the two sleeps) are gone too.
    if (hasProc) expect(treeMembers(info.pid)).toEqual([]);

    const after = await host.call("shell.output", { id: info.id });
    expect(after.success).toBe(false);
    expect(after.summary).toMatch(/No background process/);
  }, 30_000);

  it("a process that ended by itself reports its exit code; stop then just forgets it", async () => {
    const started = await host.call("shell.start", { command: "echo done; echo oops >&2; exit 3" });
    const { id } = started.data as Info;
    const out = await waitFor(async () => {
      const o = await outputOf(id);
      return o.info.running ? undefined : o;
    }, "exit");
    expect(out.info.exitCode).toBe(3);
    expect(out.summary).toMatch(new RegExp(`^${id} exited with code 3: echo done`));
    expect(out.summary).toContain("done\noops");
    const stopped = await host.call("shell.stop", { id });
    expect(stopped.success).toBe(true);
    expect(stopped.summary).toMatch(/had already ended \(exit code 3\)/);
  }, 30_000);

  it("a command that does not exist starts, then shows why it failed", async () => {
    const started = await host.call("shell.start", { command: "no-such-program-xyz --serve" });
    const { id } = started.data as Info;
    const out = await waitFor(async () => {
      const o = await outputOf(id);
      return o.info.running ? undefined : o;
    }, "exit");
    expect(out.info.exitCode).toBe(127);
    expect(out.summary).toMatch(/not found/);
    await host.call("shell.stop", { id });
  }, 30_000);

  it("output and stop of an unknown id are clear failures naming the id", async () => {
    for (const tool of ["shell.output", "shell.stop"]) {
      const r = await host.call(tool, { id: "p999" });
      expect(r.success).toBe(false);
      expect(r.summary).toMatch(/No background process 'p999'/);
      expect(r.summary).toMatch(/Use an id returned by shell.start/);
    }
  });

  it("one manager per host, in ctx.resources: closing the host's resources kills what still runs", async () => {
    const other = createShellTestHost();
    try {
      const a = (await other.call("shell.start", { command: "sleep 300 & wait" })).data as Info;
      const b = (await other.call("shell.start", { command: "sleep 301" })).data as Info;
      expect(a.id).not.toBe(b.id);
      expect(other.ctx.resources.peek(BACKGROUND_PROCESSES_KEY)).toBeDefined();
      // Another host does not see this host's processes.
      expect((await host.call("shell.output", { id: b.id })).summary).not.toContain("sleep 301");
      if (hasProc) {
        await waitFor(() => (treeMembers(a.pid).length >= 2 ? true : undefined), "sleep child");
      }
      await other.ctx.resources.closeAll();
      if (hasProc) {
        expect(treeMembers(a.pid)).toEqual([]);
        expect(treeMembers(b.pid)).toEqual([]);
      }
    } finally {
      await other.close();
    }
  }, 30_000);

  it("the start cwd is confined and used", async () => {
    const started = await host.call("shell.start", { command: "pwd" });
    const { id } = started.data as Info;
    const out = await waitFor(async () => {
      const o = await outputOf(id);
      return o.info.running ? undefined : o;
    }, "exit");
    expect(out.info.output?.trim()).toMatch(/\/ws$/);
    await host.call("shell.stop", { id });
  });
});
