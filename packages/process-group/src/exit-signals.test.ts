import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const dist = fileURLToPath(new URL("../dist/index.js", import.meta.url));

/** A node process that calls exitOnSignals(options), says "ready", and prints "exit" from its exit hook. */
async function child(options: object) {
  const code = `
    const { exitOnSignals } = await import(${JSON.stringify(dist)});
    exitOnSignals(${JSON.stringify(options)});
    process.on("exit", () => process.stdout.write("exit\\n"));
    process.on("SIGINT", () => { process.stdout.write("own SIGINT\\n"); process.exit(7); });
    process.stdout.write("ready\\n");
    setInterval(() => undefined, 1000);
  `;
  const proc = spawn(process.execPath, ["--input-type=module", "-e", code], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  proc.stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  while (!out.includes("ready")) await once(proc.stdout, "data");
  return { proc, output: () => out };
}

describe("exitOnSignals", () => {
  it("ends through process.exit (exit hooks run) with 128 + the signal's number", async () => {
    const { proc, output } = await child({});
    proc.kill("SIGUSR1");
    const [code] = await once(proc, "exit");
    expect(code).toBe(138);
    expect(output()).toContain("exit");
  });

  it("leaves `own` signals to the caller and ignores `ignore`d ones", async () => {
    const { proc, output } = await child({ own: ["SIGINT"], ignore: ["SIGHUP"] });
    proc.kill("SIGHUP");
    await new Promise((r) => setTimeout(r, 200));
    expect(proc.exitCode).toBe(null);
    proc.kill("SIGINT");
    const [code] = await once(proc, "exit");
    expect(code).toBe(7);
    expect(output()).toContain("own SIGINT");
  });
});
