import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkShellCommand, createShellPolicy } from "../src/policy/shell-policy.js";
import { ISSUE_17_ATTACKS, ISSUE_17_READABLE, ISSUE_17_REFUSED, REVIEW_RULES } from "./issue-17-forms.js";
import { AttackReplay, describeReplay, expectEffect } from "./replay-support.js";

const describeReal = describeReplay(
  ["/usr/bin/git", "/usr/bin/bash", "/usr/bin/node", "/usr/bin/sed", "/usr/bin/perl"],
  "the issue-17 replay",
);

describeReal("issue 17: commands that run their arguments, input or config, replayed for real", () => {
  const replay = new AttackReplay("capgate-issue-17-", { homeApart: true });
  beforeAll(() => replay.open());
  afterAll(() => replay.close());

  it.each(ISSUE_17_ATTACKS.map((a, i) => [i, a.effect, a.command, a] as const))(
    "%i (%s) %j",
    async (i, _effect, command, attack) => {
      expectEffect(replay, i, attack);
      const d = await checkShellCommand(command, REVIEW_RULES);
      expect(d.decision, JSON.stringify(d)).not.toBe("allow");
      expect(["deny[0]", "deny[1]", "unresolvable", "unreadable"], JSON.stringify(d)).toContain(d.rule);
    },
    // Real git repositories and processes: generous on a loaded machine (no timing is asserted).
    120_000,
  );
});

describe("issue 17: further forms of each class are denied or asked under the rules", () => {
  it.each(ISSUE_17_REFUSED)("%j", async (command) => {
    const d = await checkShellCommand(command, REVIEW_RULES);
    expect(d.decision, JSON.stringify(d)).not.toBe("allow");
    expect(d.reason?.length ?? 0).toBeGreaterThan(20);
  });

  it("without configured rules nothing is asked: the built-in rules stay as they were", async () => {
    for (const command of ["python3 -c 'print(1)'", "ed -s f <<< 'p'", "git st", "someunknowntool -x"])
      expect(await checkShellCommand(command), command).toEqual({ decision: "allow" });
  });
});

describe("issue 17: ordinary commands of the same programs stay allowed", () => {
  it.each(ISSUE_17_READABLE)("%j", async (command) => {
    expect(await checkShellCommand(command, REVIEW_RULES)).toEqual({ decision: "allow" });
    expect(await checkShellCommand(command)).toEqual({ decision: "allow" });
  });
});

describe("issue 17: the reason says which part could not be read and why", () => {
  it.each([
    ["python3 -c 'print(1)'", /code given to python3/],
    ["ed -s f <<< 'p'", /ed runs `!` lines/],
    ['cmake -E "$x"', /only known at run time/],
    ["git -c core.hooksPath=h commit -m x", /core\.hooksPath/],
    ["git st", /`git st` is not a git command capgate knows/],
    ["git config include.path x", /include\.path/],
    ["sed -n '1e date' f", /`e` command/],
    ["awk 'BEGIN{system(\"date\")}'", /system\(\)/],
    ["docker run img ls", /docker run/],
    ["someunknowntool -x", /`someunknowntool` is not a program capgate knows/],
    ["CFLAGS='-O2 -wrapper x' make", /CFLAGS/],
  ] as const)("%j", async (command, why) => {
    const d = await checkShellCommand(command, REVIEW_RULES);
    expect(d.decision, JSON.stringify(d)).not.toBe("allow");
    expect(d.reason).toMatch(why);
    if (d.rule === "unreadable") expect(d.reason).toMatch(/cannot be read completely/);
  });
});

describe("issue 17: shell.allow lifts the question for what the operator accepts, never a deny", () => {
  const rules = {
    ...REVIEW_RULES,
    allow: [
      { prefix: ["python3", "-c"], mustMatch: ["python3 -c 'print(1)'"] },
      { prefix: ["psql"], reason: "our database", mustNotMatch: ["echo psql"] },
    ],
  };

  it("an allowed unreadable command runs; what the policy does see still counts", async () => {
    const policy = await createShellPolicy(rules);
    expect(policy.check("python3 -c 'print(1)'")).toEqual({ decision: "allow" });
    expect(policy.check("psql -c 'select 1'")).toEqual({ decision: "allow" });
    expect(policy.check("python3 -c 'import os; os.system(\"git push origin main\")'")).toMatchObject({
      decision: "deny",
      rule: "deny[0]",
    });
    // Only at command position: an allow rule never speaks for a program elsewhere.
    expect(policy.check("node -e 'console.log(1)'")).toMatchObject({ decision: "ask", rule: "unreadable" });
    expect(policy.check("sometool psql")).toMatchObject({ decision: "ask", rule: "unreadable" });
    expect(policy.matches("python3 -c 'print(1)'")).toContain("allow[0]");
  });

  it("allow rules are checked like the others: bad rules and failing examples are refused at load", async () => {
    await expect(createShellPolicy({ allow: [{ prefix: [] }] })).rejects.toMatchObject({
      code: "invalid_config",
      property: "policy.shell.allow[0].prefix",
    });
    await expect(
      createShellPolicy({ deny: [{ prefix: ["x"] }], allow: [{ prefix: ["psql"], mustMatch: ["mysql"] }] }),
    ).rejects.toThrow(/allow\[0\]/);
  });
});

describe("issue 17: the README's example of rules that hold by construction", () => {
  it("says what the policy answers", async () => {
    const guarded = { deny: [{ prefix: ["git", "push"] }], allow: [{ prefix: ["psql"] }] };
    const ed = await checkShellCommand("ed -s notes.txt <<< '!git push'", guarded);
    expect(ed).toMatchObject({ decision: "ask", rule: "unreadable" });
    expect(ed.reason).toContain("ed runs `!` lines of its input");
    expect(await checkShellCommand("psql -c 'select 1'", guarded)).toEqual({ decision: "allow" });
    expect(await checkShellCommand("git submodule foreach 'git push'", guarded)).toMatchObject({
      decision: "deny",
      rule: "deny[0]",
    });
  });
});
