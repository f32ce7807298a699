import { chmodSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runProcess } from "@capgate/sandbox";
import { shellForTests } from "@capgate/test-system-parts";
import type { ApprovalRequest } from "@capgate/tools";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { createShellTestHost } from "./test-support.js";

const U = "https://example.com";
const host = createShellTestHost();
afterAll(() => host.close());
beforeEach(() => {
  expect(host.ran()).toEqual([]);
});

// A representative slice of the bypass list (the whole list is tested in packages/tools):
// each must be refused before anything runs, and the fakes on PATH prove nothing did.
const OPENER_FORMS: [string, string][] = [
  ["plain", `xdg-open ${U}`],
  [";", `ls; xdg-open ${U}`],
  ["&&", `true && xdg-open ${U}`],
  ["||", `false || xdg-open ${U}`],
  ["pipe", `echo ${U} | xdg-open`],
  ["background &", `sleep 0 & xdg-open ${U}`],
  ["$( )", `echo $(xdg-open ${U})`],
  ["backticks", `echo \`xdg-open ${U}\``],
  ["subshell", `(xdg-open ${U})`],
  ["bash -c", `bash -c 'xdg-open ${U}'`],
  ["sh -c nested", `sh -c "sleep 0; xdg-open ${U}"`],
  ["env", `env xdg-open ${U}`],
  ["env -i", `env -i PATH=/usr/bin xdg-open ${U}`],
  ["double quotes", `"xdg-open" ${U}`],
  ["split quotes", `x'dg'-open ${U}`],
  ["backslash", `\\xdg-open ${U}`],
  ["absolute path", "BIN/xdg-open https://example.com"],
  ["if", `if true; then xdg-open ${U}; fi`],
  ["function", `f() { xdg-open ${U}; }; f`],
  ["open", `open ${U}`],
  ["gio open", `gio open ${U}`],
  ["browser", `firefox ${U}`],
  ["sensible-browser", `sensible-browser ${U}`],
  ["python -m webbrowser", `python3 -m webbrowser ${U}`],
];

// Forms whose command word is only known at run time: refused because they cannot be checked.
const UNRESOLVABLE_FORMS: [string, string][] = [
  ["variable", `c=xdg-open; $c ${U}`],
  ["braced variable", `x=xdg; \${x}-open ${U}`],
  ["eval", `eval "$cmd"`],
  ["command substitution as name", `$(printf xdg-open) ${U}`],
];

describe("shell.run: GUI openers are refused before anything runs", () => {
  it("the fake opener on PATH does leave a mark when run (so the tests below can fail)", async () => {
    await runProcess({ file: "xdg-open", args: [U], cwd: host.workspace, env: host.ctx.env });
    expect(host.ran()).toEqual([`xdg-open ${U}`]);
    rmSync(host.marker);
  });

  it.each(OPENER_FORMS)("%s: %s", async (_form, raw) => {
    const command = raw.replace("BIN", host.bin);
    const refused = host.call("shell.run", { command });
    await expect(refused).rejects.toMatchObject({ code: "policy_denied", property: "command" });
    await expect(refused).rejects.toThrow(/browser_panel\.open/);
    expect(host.ran()).toEqual([]);
  });

  it.each(UNRESOLVABLE_FORMS)("%s: %s", async (_form, command) => {
    const refused = host.call("shell.run", { command });
    await expect(refused).rejects.toMatchObject({ code: "policy_denied" });
    await expect(refused).rejects.toThrow(/cannot be checked before it runs/);
    expect(host.ran()).toEqual([]);
  });

  it("shell.start applies the same policy", async () => {
    await expect(host.call("shell.start", { command: `sleep 0; xdg-open ${U}` })).rejects.toMatchObject({
      code: "policy_denied",
    });
    await expect(host.call("shell.start", { command: `c=xdg-open; $c ${U}` })).rejects.toMatchObject({
      code: "policy_denied",
    });
    expect(host.ran()).toEqual([]);
  });

  it.each([
    ["echo open the door", "open the door"],
    ["echo xdg-open", "xdg-open"],
    ["printf 'open %s\\n' file", "open file"],
    ["echo 'bash -c xdg-open'", "bash -c xdg-open"],
    ["command -v xdg-open", "/xdg-open"],
    ["echo python3 -m webbrowser", "python3 -m webbrowser"],
    [`node -e "console.log('open')"`, "open"],
  ])("an ordinary command mentioning open runs: %s", async (command, expected) => {
    const result = await host.call("shell.run", { command });
    expect(result.success).toBe(true);
    expect(result.summary).toContain(expected);
    expect(host.ran()).toEqual([]);
  });
});

describe("configured shell rules", () => {
  const policy = {
    shell: {
      ...shellForTests(),
      deny: [{ prefix: ["git", "push"], reason: "pushing is for humans" }],
      ask: [{ prefix: ["touch"], reason: "touch creates files" }],
    },
  };

  it("a deny rule refuses `git push` in any position, and nothing runs", async () => {
    const fakeGit = host.bin;
    writeFileSync(join(fakeGit, "git"), `#!/bin/sh\necho "git $*" >> '${host.marker}'\n`);
    chmodSync(join(fakeGit, "git"), 0o755);
    for (const command of ["git push origin main", "echo ok && git push", "env GIT_DIR=.git git push -f"]) {
      const refused = host.call("shell.run", { command }, { policy });
      await expect(refused).rejects.toMatchObject({ code: "policy_denied", property: "command" });
      await expect(refused).rejects.toThrow(/pushing is for humans/);
    }
    expect(host.ran()).toEqual([]);
    // Other git commands are not affected by the rule (and the fake proves they do run).
    expect((await host.call("shell.run", { command: "git status" }, { policy })).success).toBe(true);
    expect(host.ran()).toEqual(["git status"]);
    rmSync(host.marker);
    rmSync(join(fakeGit, "git"));
  });

  it("an ask rule asks the host's approver: denied → nothing runs; approved → it runs", async () => {
    const asked: ApprovalRequest[] = [];
    const answer = (yes: boolean) => async (request: ApprovalRequest) => {
      asked.push(request);
      return yes;
    };
    const file = join(host.workspace, "made.txt");

    await expect(
      host.call("shell.run", { command: "touch made.txt" }, { policy, approve: answer(false) }),
    ).rejects.toMatchObject({ code: "policy_denied" });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ tool: "shell.run", risk: "exec", capability: "shell" });
    expect(asked[0]!.description).toMatch(/touch creates files/);
    expect(existsSync(file)).toBe(false);

    // No approver at all: refused, not run.
    await expect(host.call("shell.run", { command: "touch made.txt" }, { policy })).rejects.toThrow(
      /needs approval/,
    );
    expect(existsSync(file)).toBe(false);

    const ok = await host.call("shell.run", { command: "touch made.txt" }, { policy, approve: answer(true) });
    expect(ok.success).toBe(true);
    expect(existsSync(file)).toBe(true);
    expect(asked).toHaveLength(2);

    // A command no rule matches runs without asking.
    await host.call("shell.run", { command: "echo hi" }, { policy, approve: answer(false) });
    expect(asked).toHaveLength(2);
  });

  it("a broken configured rule is a clear error naming the property, and nothing runs", async () => {
    const bad = { shell: { deny: [{ prefix: [] }] } } as never;
    await expect(host.call("shell.run", { command: "echo hi" }, { policy: bad })).rejects.toThrow(
      /policy\.shell\.deny\[0\]\.prefix/,
    );
  });
});

describe("cwd is confined to the workspace", () => {
  it.each([
    ["..", /climbs out of the workspace/],
    ["../..", /climbs out of the workspace/],
    ["/etc", /outside the workspace/],
    ["sub/../../x", /climbs out of the workspace/],
  ])("cwd %j is refused", async (cwd, message) => {
    const refused = host.call("shell.run", { command: "pwd", cwd });
    await expect(refused).rejects.toMatchObject({ code: "policy_denied", property: "cwd" });
    await expect(refused).rejects.toThrow(message);
    await expect(host.call("shell.start", { command: "pwd", cwd })).rejects.toMatchObject({
      code: "policy_denied",
    });
  });

  it("a symlink pointing outside is refused", async () => {
    symlinkSync("/tmp", join(host.workspace, "out"));
    await expect(host.call("shell.run", { command: "pwd", cwd: "out" })).rejects.toMatchObject({
      code: "policy_denied",
      property: "cwd",
    });
  });

  it("a directory inside is used; a missing one or a file is a clear failure", async () => {
    mkdirSync(join(host.workspace, "pkg", "src"), { recursive: true });
    const inside = await host.call("shell.run", { command: "pwd", cwd: "pkg/src" });
    expect(inside.success).toBe(true);
    expect((inside.data as { stdout: string }).stdout.trim()).toMatch(/\/ws\/pkg\/src$/);
    expect(inside.summary).toContain("(in pkg/src)");

    const missing = await host.call("shell.run", { command: "pwd", cwd: "nope" });
    expect(missing.success).toBe(false);
    expect(missing.summary).toMatch(/cwd "nope" does not exist/);

    writeFileSync(join(host.workspace, "file.txt"), "x");
    const file = await host.call("shell.run", { command: "pwd", cwd: "file.txt" });
    expect(file.success).toBe(false);
    expect(file.summary).toMatch(/is a file, not a directory/);
    const under = await host.call("shell.run", { command: "pwd", cwd: "file.txt/sub" });
    expect(under.success).toBe(false);
    expect(under.summary).toMatch(/cwd "file.txt\/sub"/);
  });
});
