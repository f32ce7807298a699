import { describe, expect, it } from "vitest";
import { splitCommandLine } from "./split-command.js";

describe("splitCommandLine", () => {
  it("splits words with shell quoting rules", async () => {
    expect(await splitCommandLine("node server.js --port 3000")).toEqual([
      "node",
      "server.js",
      "--port",
      "3000",
    ]);
    expect(await splitCommandLine(`npx -y "@scope/pkg" 'a b' c\\ d`)).toEqual([
      "npx",
      "-y",
      "@scope/pkg",
      "a b",
      "c d",
    ]);
  });

  it("refuses what only a shell could evaluate", async () => {
    for (const bad of [
      "a | b",
      "a; b",
      "a && b",
      "a > out",
      "echo $HOME",
      "echo $(id)",
      "ls *.js",
      "VAR=1 node x",
      "",
    ]) {
      await expect(splitCommandLine(bad), bad).rejects.toMatchObject({
        code: "invalid_command",
        property: "command",
      });
    }
  });
});
