import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startServer } from "./index.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-start-")));
const base = { workspace: root, stateDir: join(root, "state"), env: {} };

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("startServer", () => {
  it("binds 127.0.0.1, generates a token when none is given, and closes", async () => {
    const server = await startServer({ ...base, port: 0 });
    try {
      expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
      expect(server.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(server.viewerUrl).toBe(`${server.url}/#token=${server.token}`);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    } finally {
      await server.close();
    }
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  });

  it("takes the token from CAPGATE_TOKEN, and refuses a weak one naming where it came from", async () => {
    const server = await startServer({
      ...base,
      port: 0,
      env: { CAPGATE_TOKEN: "from-the-environment-123" },
    });
    expect(server.token).toBe("from-the-environment-123");
    await server.close();
    await expect(startServer({ ...base, port: 0, env: { CAPGATE_TOKEN: "short" } })).rejects.toMatchObject({
      code: "invalid_token",
      property: "token",
      message: expect.stringContaining("CAPGATE_TOKEN"),
    });
  });

  it("says which port is taken", async () => {
    const first = await startServer({ ...base, port: 0 });
    try {
      await expect(startServer({ ...base, port: first.port })).rejects.toMatchObject({
        code: "address_in_use",
        property: "port",
      });
    } finally {
      await first.close();
    }
  });

  it("refuses an impossible port and a config file that is not there", async () => {
    await expect(startServer({ ...base, port: 70_000 })).rejects.toMatchObject({
      code: "invalid_port",
      property: "port",
    });
    await expect(
      startServer({ ...base, port: 0, configPath: join(root, "missing.json") }),
    ).rejects.toMatchObject({
      code: "invalid_config",
    });
  });

  it("loads the config file it is pointed at, naming a bad property", async () => {
    const file = join(root, "capgate.config.json");
    writeFileSync(file, JSON.stringify({ approval: "sometimes" }));
    await expect(startServer({ ...base, port: 0, configPath: file })).rejects.toMatchObject({
      code: "invalid_config",
      property: expect.stringContaining("approval"),
    });
  });
});
