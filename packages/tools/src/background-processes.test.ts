import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CapgateError } from "@capgate/schema";
import { leaveBehind, needs, processesWith, shellForTests, uniqueSleep } from "@capgate/test-system-parts";
import { afterAll, describe, expect, it } from "vitest";
import { BackgroundProcesses, backgroundProcesses } from "./background-processes.js";
import { groupMembers } from "./process-group.js";
import { createHostResources } from "./resources.js";
import type { ShellCheck } from "./shell-check.js";
import { minimalEnv } from "./tool-context.js";

const dir = mkdtempSync(join(tmpdir(), "capgate-bg-"));
const env = minimalEnv();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`gave up waiting for ${what}`);
}

function alive(pid: number): boolean {
  const members = groupMembers(pid);
  if (members) return members.length > 0;
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("BackgroundProcesses", () => {
  it("starts, reads output, lists and stops a process group", async () => {
    const bg = new BackgroundProcesses({ killGraceMs: 500 });
    const m = uniqueSleep();
    const info = bg.start({
      file: "sh",
      args: ["-c", `for i in 1 2 3 4 5; do echo line$i; done; ${leaveBehind(m)}; wait`],
      cwd: dir,
      env,
    });
    expect(info).toMatchObject({ id: "p1", running: true });
    await until(
      () => bg.output(info.id).text.includes("line5") && processesWith(m).length === 3,
      "output and the three sleeps",
    );
    expect(bg.output(info.id, 2).text).toBe("line4\nline5\n");
    expect(bg.list().map((p) => [p.id, p.running])).toEqual([["p1", true]]);
    expect(alive(info.pid!)).toBe(true);

    const stopped = await bg.stop(info.id);
    expect(stopped.running).toBe(false);
    expect(stopped.signal).toBe("SIGTERM");
    expect(alive(info.pid!)).toBe(false);
    // The setsid and double-forked ones too: they were in the process's pid namespace.
    expect(processesWith(m)).toEqual([]);
    expect(bg.list()).toEqual([]);
  }, 20_000);

  it("keeps a finished process's exit code and output until stopped", async () => {
    const bg = new BackgroundProcesses();
    const info = bg.start({ file: "sh", args: ["-c", "echo bye; exit 7"], cwd: dir, env });
    await until(() => !bg.list()[0]!.running, "exit");
    expect(bg.output(info.id)).toMatchObject({ text: "bye\n", info: { exitCode: 7, running: false } });
    await bg.stop(info.id);
  });

  it("names unknown ids clearly", () => {
    const bg = new BackgroundProcesses();
    const e = (() => {
      try {
        bg.output("p9");
      } catch (x) {
        return x;
      }
    })();
    expect(CapgateError.isInstance(e) && e.code).toBe("not_found");
    expect((e as CapgateError).property).toBe("id");
  });

  it("startShell passes the shell policy first", async () => {
    const bg = new BackgroundProcesses();
    const seen: string[] = [];
    const check: ShellCheck = async (command) => {
      seen.push(command);
      return command.includes("open")
        ? { decision: "deny", reason: "opens a browser", rule: "test.open" }
        : { decision: "allow" };
    };
    const marker = join(dir, "bg-opened");
    await expect(
      bg.startShell({ command: `nohup touch ${marker}-open`, check, cwd: dir, env }),
    ).rejects.toMatchObject({ code: "policy_denied", property: "command", message: "opens a browser" });
    expect(bg.list()).toEqual([]);
    const ok = await bg.startShell({ command: "echo served", check, cwd: dir, env, policy: shellForTests() });
    await until(() => bg.output(ok.id).text === "served\n", "shell output");
    expect(seen).toEqual([`nohup touch ${marker}-open`, "echo served"]);
    expect(existsSync(`${marker}-open`)).toBe(false);
    await bg.stopAll();
  });

  it("startShell without a check refuses and starts nothing (fail closed)", async () => {
    const bg = new BackgroundProcesses();
    const marker = join(dir, "bg-unchecked");
    await expect(bg.startShell({ command: `touch ${marker}`, cwd: dir, env } as never)).rejects.toMatchObject(
      { code: "policy_denied", message: /no shell policy check was given/ },
    );
    expect(bg.list()).toEqual([]);
    expect(existsSync(marker)).toBe(false);
  });

  it("lives in ctx.resources and is stopped by closeAll", async () => {
    const resources = createHostResources();
    const bg = await backgroundProcesses({ resources });
    expect(await backgroundProcesses({ resources })).toBe(bg);
    const a = bg.start({ file: "sleep", args: ["300"], cwd: dir, env });
    const b = bg.start({ file: "sleep", args: ["301"], cwd: dir, env });
    await resources.closeAll();
    expect(alive(a.pid!)).toBe(false);
    expect(alive(b.pid!)).toBe(false);
    expect(bg.list()).toEqual([]);
  }, 20_000);

  it("refuses to start more than maxRunning", async () => {
    const bg = new BackgroundProcesses({ maxRunning: 1 });
    bg.start({ file: "sleep", args: ["300"], cwd: dir, env });
    expect(() => bg.start({ file: "sleep", args: ["300"], cwd: dir, env })).toThrow(/limit is 1/);
    await bg.stopAll();
  }, 20_000);
});

describe("host exit", () => {
  // A real host process using the built package: it starts a background process and a
  // foreground runProcess, each leaving processes behind in every form (a plain background
  // job, setsid, a double fork), then ends; all of them must end with it.
  const dist = fileURLToPath(new URL("../dist/index.js", import.meta.url));
  const host = join(dir, "host.mjs");
  writeFileSync(
    host,
    `const { BackgroundProcesses, runProcess } = await import(process.argv[2]);
const [, , , workDir, mode, bgLine, fgLine] = process.argv;
const env = { PATH: process.env.PATH };
new BackgroundProcesses().start({ file: "bash", args: ["-c", bgLine], cwd: workDir, env });
void runProcess({ file: "bash", args: ["-c", fgLine], cwd: workDir, env });
if (mode === "exit") process.stdin.once("data", () => process.exit(0));
setInterval(() => {}, 1000);
`,
  );
  // kill -9 runs no exit hook: only a pid namespace that dies with its parent holds then.
  const namespaces = needs(["bwrap"]);

  it.each(["exit", "SIGTERM", "SIGINT", "SIGKILL"])(
    "kills every process the host started when the host ends (%s)",
    async (mode) => {
      if (!existsSync(dist)) throw new Error(`build @capgate/tools first: ${dist} is missing`);
      if (mode === "SIGKILL" && namespaces.skip) return;
      const bgMark = uniqueSleep();
      const fgMark = uniqueSleep();
      const child = spawn(
        process.execPath,
        [host, dist, dir, mode, `${leaveBehind(bgMark)}; wait`, `${leaveBehind(fgMark)}; wait`],
        { stdio: ["pipe", "inherit", "inherit"] },
      );
      const exited = new Promise((r) => child.once("exit", r));
      await until(
        () => processesWith(bgMark).length === 3 && processesWith(fgMark).length === 3,
        "the host's processes to start",
      );
      if (mode === "exit") child.stdin.write("go\n");
      else child.kill(mode as NodeJS.Signals);
      await exited;
      await until(
        () => processesWith(bgMark).length === 0 && processesWith(fgMark).length === 0,
        "the host's processes to end",
      );
    },
    20_000,
  );
});
