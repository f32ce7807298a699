import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";

// Every ```sh block of README.md and docs/*.md runs, from the repository root, with
// `capgate` on PATH through `pnpm link:cli` into a temp prefix. A block preceded by
// `<!-- docs-test: skip (why) -->` is not run (a paid model, a login, a long-running
// server, the whole suite); the test lists those. A failure names the file and line.
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const SKIP = /^<!--\s*docs-test:\s*skip\s*\((.+)\)\s*-->$/;

interface Block {
  file: string;
  line: number;
  code: string;
  skip?: string;
}

function blocks(): Block[] {
  const files = [
    "README.md",
    ...readdirSync(join(ROOT, "docs"))
      .filter((f) => f.endsWith(".md"))
      .map((f) => `docs/${f}`),
  ];
  const out: Block[] = [];
  for (const file of files) {
    const lines = readFileSync(join(ROOT, file), "utf8").split("\n");
    for (let i = 0; i < lines.length; i++) {
      if (!/^```(sh|bash)\s*$/.test(lines[i] ?? "")) continue;
      const start = i + 1;
      const body: string[] = [];
      for (i++; i < lines.length && !/^```\s*$/.test(lines[i] ?? ""); i++) body.push(lines[i] ?? "");
      let p = start - 2;
      while (p >= 0 && (lines[p] ?? "").trim() === "") p--;
      const skip = SKIP.exec((lines[p] ?? "").trim())?.[1];
      out.push({ file, line: start, code: body.join("\n"), ...(skip ? { skip } : {}) });
    }
  }
  return out;
}

const all = blocks();
let env: NodeJS.ProcessEnv = {};

beforeAll(() => {
  const prefix = mkdtempSync(join(tmpdir(), "capgate-docs-prefix-"));
  const home = mkdtempSync(join(tmpdir(), "capgate-docs-home-"));
  env = {
    ...process.env,
    // `npm prefix -g` (used by pnpm link:cli) answers with the temp prefix, not the machine's.
    npm_config_prefix: prefix,
    PATH: `${join(prefix, "bin")}:${process.env.PATH}`,
    CAPGATE_HOME: home,
    NO_COLOR: "1",
    TURBO_TELEMETRY_DISABLED: "1",
    npm_config_update_notifier: "false",
  };
  delete env.CAPGATE_MODEL;
});

describe("the commands in README.md and docs/", () => {
  it("lists what it does not run, each with a reason", () => {
    const skipped = all.filter((b) => b.skip);
    console.log(
      `docs commands: ${all.length - skipped.length} block(s) run, ${skipped.length} skipped:\n${skipped
        .map((b) => `  ${b.file}:${b.line} — ${b.skip}`)
        .join("\n")}`,
    );
    expect(all.length - skipped.length).toBeGreaterThan(3);
  });

  for (const block of all.filter((b) => !b.skip)) {
    it(`${block.file}:${block.line}`, () => {
      const r = spawnSync("bash", ["-euo", "pipefail", "-c", block.code], {
        cwd: ROOT,
        env,
        encoding: "utf8",
        timeout: 540_000,
      });
      expect(
        r.status,
        `${block.file}:${block.line} exited ${r.status}\n--- command ---\n${block.code}\n--- stderr ---\n${r.stderr.slice(-2000)}\n--- stdout ---\n${r.stdout.slice(-1000)}`,
      ).toBe(0);
    });
  }
});
