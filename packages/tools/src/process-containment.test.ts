import { spawn } from "node:child_process";
import { leaveBehind, needs, processesWith, uniqueSleep } from "@capgate/test-system-parts";
import { describe, expect, it } from "vitest";
import { CONTAINMENT_BWRAP_ARGS, containCommand } from "./process-containment.js";
import { killMarkedProcesses, SANDBOX_MARK_VAR, terminateGroup } from "./process-group.js";
import { minimalEnv } from "./tool-context.js";

const env = minimalEnv();
const bwrap = needs(["bwrap"]);

/** Start a contained command detached (its own group), as runProcess does; resolves when it exits. */
function start(contained: ReturnType<typeof containCommand>): { pid: number; exited: Promise<void> } {
  const child = spawn(contained.file, contained.args, {
    env: contained.env as NodeJS.ProcessEnv,
    detached: true,
    stdio: "ignore",
  });
  return { pid: child.pid as number, exited: new Promise((done) => child.once("exit", () => done())) };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 750; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe("containCommand", () => {
  it.skipIf(bwrap.skip)(`wraps the program in a pid namespace of its own${bwrap.note}`, async () => {
    const contained = containCommand("bash", ["-c", "echo $$"], env);
    expect(contained.containment).toBe("namespace");
    expect(contained.args.slice(0, CONTAINMENT_BWRAP_ARGS.length)).toEqual([...CONTAINMENT_BWRAP_ARGS]);
    // The bare name is resolved on PATH before it is handed to bubblewrap.
    expect(contained.args[CONTAINMENT_BWRAP_ARGS.length + 1]).toMatch(/^\/.*\/bash$/);
  });

  it("refuses a program that is not on PATH with spawn_failed, before anything starts", () => {
    expect(() => containCommand("capgate-no-such-program", [], env)).toThrow(
      expect.objectContaining({ code: "spawn_failed" }),
    );
  });

  it("without a usable bubblewrap, marks the program's environment; the mark finds what escaped the group", async () => {
    const m = uniqueSleep();
    const contained = containCommand("bash", ["-c", `${leaveBehind(m)}; wait`], env, {
      bwrap: "/nonexistent/bwrap",
    });
    expect(contained.containment).toBe("mark");
    expect(contained.env[SANDBOX_MARK_VAR]).toBe(contained.mark);
    const { pid, exited } = start(contained);
    await until(() => processesWith(m).length === 3, "the three sleeps");
    await terminateGroup(pid, 500);
    await exited;
    // The setsid ones left the group: only the mark reaches them.
    expect(processesWith(m).length).toBeGreaterThan(0);
    killMarkedProcesses(contained.mark as string);
    await until(() => processesWith(m).length === 0, "the marked processes to die");
  }, 30_000);
});
