import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DOCS_ADDRESS, type DocsServer, startDocsServer } from "./docs-serve.js";

// Every ```sh block of README.md and docs/*.md runs, from the repository root, with
// `capgate` on PATH through `pnpm link:cli` into a temp prefix. A block preceded by
// `<!-- docs-test: skip (why) -->` is not run (a paid model, a login, the whole suite);
// the test lists those. A failure names the file and line.
//
// Blocks preceded by `<!-- docs-test: serve -->` talk to a running `capgate serve`. They run
// in order, per file, in one shell state (each block's exported variables — `set -a` — carry
// to the next, as in the reader's terminal), mechanically adapted:
//   1. the file's first serve block is its setup (token, `S`, `AUTH`); after it, the test
//      starts a real `capgate serve --port 0` with the `CAPGATE_TOKEN` that block exported;
//   2. `127.0.0.1:7777`, the address the docs use, becomes that server's address;
//   3. `curl` runs with `--fail-with-body`, so an HTTP error fails the block.
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const SKIP = /^<!--\s*docs-test:\s*skip\s*\((.+)\)\s*-->$/;
const SERVE = /^<!--\s*docs-test:\s*serve\s*-->$/;

interface Block {
  file: string;
  line: number;
  code: string;
  skip?: string;
  serve?: boolean;
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
      const marker = (lines[p] ?? "").trim();
      const skip = SKIP.exec(marker)?.[1];
      out.push({
        file,
        line: start,
        code: body.join("\n"),
        ...(skip ? { skip } : {}),
        ...(SERVE.test(marker) ? { serve: true } : {}),
      });
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

  for (const block of all.filter((b) => !b.skip && !b.serve)) {
    it(`${block.file}:${block.line}`, async () => {
      expectRan(block, await runBlock(block.code, env));
    });
  }
});

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

// Asynchronous: the model endpoint of the served blocks lives in this process and must
// answer while a block runs (spawnSync would block it).
function runBlock(code: string, blockEnv: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve, reject) => {
    execFile(
      "bash",
      ["-euo", "pipefail", "-c", code],
      { cwd: ROOT, env: blockEnv, encoding: "utf8", timeout: 540_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== "number" && !error.killed) reject(error);
        else
          resolve({
            status: error ? (typeof error.code === "number" ? error.code : null) : 0,
            stdout,
            stderr,
          });
      },
    );
  });
}

function expectRan(block: Block, r: Ran): void {
  expect(
    r.status,
    `${block.file}:${block.line} exited ${r.status}\n--- command ---\n${block.code}\n--- stderr ---\n${r.stderr.slice(-2000)}\n--- stdout ---\n${r.stdout.slice(-1000)}`,
  ).toBe(0);
}

const served = new Map<string, Block[]>();
for (const block of all.filter((b) => b.serve && !b.skip))
  served.set(block.file, [...(served.get(block.file) ?? []), block]);

for (const [file, [setup, ...rest]] of served) {
  describe(`${file} against a real capgate serve`, () => {
    const state = join(mkdtempSync(join(tmpdir(), "capgate-docs-state-")), "env.sh");
    let server: DocsServer | undefined;
    let address = "";
    // One shell state through the file's blocks (see the top of this file).
    const adapt = (code: string) =>
      [
        "set -a",
        `[ -f ${JSON.stringify(state)} ] && source ${JSON.stringify(state)}`,
        'curl() { command curl --fail-with-body "$@"; }',
        address ? code.replaceAll(DOCS_ADDRESS, address) : code,
        `export -p > ${JSON.stringify(`${state}.next`)} && mv ${JSON.stringify(`${state}.next`)} ${JSON.stringify(state)}`,
      ].join("\n");

    beforeAll(async () => {
      if (!setup) return;
      expectRan(setup, await runBlock(adapt(setup.code), env));
      const token = /^declare -x CAPGATE_TOKEN="([^"]+)"$/m.exec(readFileSync(state, "utf8"))?.[1];
      expect(token, `${setup.file}:${setup.line} must export CAPGATE_TOKEN`).toBeDefined();
      server = await startDocsServer(token as string);
      address = server.address;
      // The setup's S names the docs' address: rule 2 applied to what it exported.
      writeFileSync(state, readFileSync(state, "utf8").replaceAll(DOCS_ADDRESS, address));
    });
    afterAll(async () => {
      await server?.stop();
    });

    for (const block of rest) {
      it(`${block.file}:${block.line}`, async () => {
        expectRan(block, await runBlock(adapt(block.code), env));
      });
    }
  });
}
