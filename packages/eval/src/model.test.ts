import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ScriptedModel } from "@capgate/models";
import { describe, expect, it } from "vitest";
import { modelForRun } from "./model.js";

const act = (name: string, args: Record<string, unknown>) => JSON.stringify({ name, arguments: args });

async function replies(model: ScriptedModel): Promise<string[]> {
  const out: string[] = [];
  while (model.remaining > 0)
    out.push((await model.generate({ system: "", messages: [{ role: "user", content: "x" }] })).text);
  return out;
}

describe("modelForRun with scripted:DIR", () => {
  const dir = mkdtempSync(join(tmpdir(), "capgate-eval-scripts-"));
  writeFileSync(
    join(dir, "t.json"),
    JSON.stringify([
      act("capability_search", { query: "files" }),
      act("capability_load", { name: "fs" }),
      act("capability_call", { tool: "fs.write", arguments: { path: "a", content: "{{workspace}}" } }),
      act("capability_call", { tool: "memory/read_graph" }),
      act("finish", { summary: "at {{web}}" }),
    ]),
  );
  writeFileSync(join(dir, "t.code.json"), JSON.stringify([act("finish", { summary: "code" })]));
  const values = { workspace: '/w/"q"', task: "/t", scratch: "/s", node: "/n", web: "http://127.0.0.1:1" };

  it("replays a task's gate script in gate mode, with placeholders filled and JSON-escaped", async () => {
    const model = modelForRun(
      `scripted:${dir}`,
      { task: "t", mode: "gate" },
      { cwd: "/", values },
    ) as ScriptedModel;
    const texts = await replies(model);
    expect(texts).toHaveLength(5);
    expect(JSON.parse(texts[2]!).arguments.arguments.content).toBe('/w/"q"');
    expect(JSON.parse(texts[4]!).arguments.summary).toBe("at http://127.0.0.1:1");
  });

  it("turns it into direct calls for exposed mode, dropping search and load", async () => {
    const model = modelForRun(
      `scripted:${dir}`,
      { task: "t", mode: "exposed" },
      { cwd: "/", values },
    ) as ScriptedModel;
    const texts = (await replies(model)).map((t) => JSON.parse(t) as { name: string; arguments: unknown });
    expect(texts.map((t) => t.name)).toEqual(["fs_write", "memory__read_graph", "finish"]);
    expect(texts[0]?.arguments).toEqual({ path: "a", content: '/w/"q"' });
    expect(texts[1]?.arguments).toEqual({});
  });

  it("prefers a mode's own script, and names both files when a task has none", async () => {
    const model = modelForRun(`scripted:${dir}`, { task: "t", mode: "code" }, { cwd: "/" }) as ScriptedModel;
    expect(await replies(model)).toEqual([act("finish", { summary: "code" })]);
    expect(() => modelForRun(`scripted:${dir}`, { task: "other", mode: "gate" }, { cwd: "/" })).toThrow(
      /no scripted replies for task other .*other\.gate\.json and other\.json/,
    );
  });
});
