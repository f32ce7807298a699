import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLI_BIN, childEnv, everything, REPO } from "./support.js";

/** The address docs write for `capgate serve`; the test puts the real one in its place. */
export const DOCS_ADDRESS = "127.0.0.1:7777";

export interface DocsServer {
  /** `127.0.0.1:<port>` of the running server. */
  readonly address: string;
  stop(): Promise<void>;
}

/**
 * A local server speaking OpenAI's Chat Completions, so the docs' `"model":"openai:…"`
 * runs as written (OPENAI_BASE_URL points here): every goal is finished at once.
 */
async function finishingModel(): Promise<Server> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          id: "c1",
          object: "chat.completion",
          created: 0,
          model: "docs-model",
          choices: [
            {
              index: 0,
              message: {
                role: "assistant",
                content: '{"name":"finish","arguments":{"summary":"Nothing to fix: the docs example ran."}}',
              },
              finish_reason: "stop",
            },
          ],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

/**
 * `capgate serve --port 0` as docs/server.md has the reader start it: with the
 * `CAPGATE_TOKEN` the docs' setup block exported, in a workspace holding the repository's
 * README.md (the file the examples read) and a config naming the `everything` MCP server
 * (the server the examples call), models on a local OpenAI-compatible endpoint.
 */
export async function startDocsServer(token: string): Promise<DocsServer> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-docs-serve-")));
  const workspace = join(root, "project");
  const home = join(root, "home");
  mkdirSync(workspace);
  copyFileSync(join(REPO, "README.md"), join(workspace, "README.md"));
  writeFileSync(
    join(workspace, "capgate.config.json"),
    JSON.stringify({ mcpServers: { everything: everything() } }, null, 2),
  );
  const model = await finishingModel();
  const modelUrl = `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`;
  const child: ChildProcess = spawn(process.execPath, [CLI_BIN, "serve", "--port", "0"], {
    cwd: workspace,
    env: childEnv(home, {
      CAPGATE_TOKEN: token,
      OPENAI_BASE_URL: modelUrl,
      OPENAI_API_KEY: "sk-docs-test",
      NO_COLOR: "1",
    }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const closed = new Promise((resolve) => child.once("close", resolve));
      child.kill("SIGTERM");
      await closed;
    }
    await new Promise((resolve) => model.close(resolve));
  };
  let out = "";
  let err = "";
  child.stderr?.on("data", (d) => {
    err += d;
  });
  try {
    const address = await new Promise<string>((resolve, reject) => {
      child.stdout?.on("data", (d) => {
        out += d;
        const found = /listening on http:\/\/(127\.0\.0\.1:\d+)/.exec(out)?.[1];
        if (found) resolve(found);
      });
      child.once("close", (code) =>
        reject(new Error(`capgate serve exited ${code} before listening\n${err}\n${out}`)),
      );
    });
    return { address, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
