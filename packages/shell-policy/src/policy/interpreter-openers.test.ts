import { describe, expect, it } from "vitest";
import { checkShellCommand } from "./shell-policy.js";

const U = "https://example.com";

/** The GUI refusal: denied by a gui.* rule, naming browser_panel.open. */
async function deniedAsOpener(command: string): Promise<boolean> {
  const verdict = await checkShellCommand(command);
  return (
    verdict.decision === "deny" &&
    /^gui\./.test(verdict.rule ?? "") &&
    /browser_panel\.open/.test(verdict.reason ?? "")
  );
}

describe("interpreter code: a word in a string literal is not an opener", () => {
  // A word inside a string literal is data: not an import, not a call.
  it.each([
    `python3 -c 'print("webbrowser")'`,
    `python3 -c "print('webbrowser')"`,
    `python3 -c 'x = "import webbrowser"; print(len(x))'`,
    `python3 -c 'print("antigravity is a joke module")'`,
    `python3 - <<'EOF'\nprint("webbrowser")\nEOF`,
    `python3 -c 'print("\\x77ebbrowser")'`,
    `Rscript -e 'print("browseURL")'`,
  ])("allows %s", async (command) => {
    expect(await checkShellCommand(command)).toEqual({ decision: "allow" });
  });

  // The real forms stay refused: an import, a call, -m, a runner module, and a literal that
  // becomes an argv word of a process the code starts.
  it.each([
    `python3 -m webbrowser ${U}`,
    `python3 -mwebbrowser ${U}`,
    `python3 -c 'import webbrowser'`,
    `python3 -c 'import webbrowser as w; w.open("${U}")'`,
    `python3 -c 'from webbrowser import open_new; open_new("${U}")'`,
    `python3 -c 'import sys, webbrowser; webbrowser.open(sys.argv[1])' ${U}`,
    `python3 -c 'import antigravity'`,
    `python3 -m timeit -s 'import webbrowser' 'webbrowser.open(1)'`,
    `python3 - <<'EOF'\nimport webbrowser\nwebbrowser.open("${U}")\nEOF`,
    `python3 -c 'import subprocess; subprocess.run(["python3", "-m", "webbrowser", "${U}"])'`,
    `python3 -c 'import os; os.system("python3 -m webbrowser ${U}")'`,
    `node -e 'require("open")("${U}")'`,
    `ruby -rlaunchy -e 'Launchy.open("${U}")'`,
    `Rscript -e 'browseURL("${U}")'`,
  ])("denies %s as an opener", async (command) => {
    expect(await deniedAsOpener(command)).toBe(true);
  });

  // Loading a module by a computed name cannot be checked: still refused (not as an opener).
  it.each([`python3 -c '__import__("webbrowser").open("${U}")'`, `python3 -c 'exec("import webbrowser")'`])(
    "denies %s as unreadable code",
    async (command) => {
      expect(await checkShellCommand(command)).toMatchObject({ decision: "deny", rule: "unresolvable" });
    },
  );
});
