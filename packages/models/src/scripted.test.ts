import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createModel } from "./create-model.js";
import { isModelError, type ModelError } from "./errors.js";
import { createScriptedModel } from "./scripted.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "capgate-models-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function write(name: string, content: string): string {
  const file = join(dir, name);
  writeFileSync(file, content);
  return file;
}

function thrown(fn: () => unknown): ModelError {
  try {
    fn();
  } catch (error) {
    if (isModelError(error)) return error;
    throw error;
  }
  throw new Error("expected an error");
}

const ask = (content: string) => ({ system: "sys", messages: [{ role: "user" as const, content }] });

describe("scripted:<file>", () => {
  it("replays the replies in order, strings and { text } objects alike, and records the requests", async () => {
    const file = write("script.json", JSON.stringify(["one", { text: "two" }, "three"]));
    const model = createModel(`scripted:${file}`);
    expect(model.provider).toBe("scripted");
    expect(model.describe()).toBe(`scripted:${file} (3 replies)`);
    expect((await model.generate(ask("a"))).text).toBe("one");
    expect((await model.generate(ask("b"))).text).toBe("two");
    expect(await model.generate(ask("c"))).toEqual({ text: "three" });
  });

  it("fails clearly when the script runs out", async () => {
    const file = write("six.json", JSON.stringify(["1", "2", "3", "4", "5", "6"]));
    const model = createModel(`scripted:${file}`);
    for (let i = 0; i < 6; i++) await model.generate(ask(`${i}`));
    await expect(model.generate(ask("seventh"))).rejects.toMatchObject({
      code: "scripted_exhausted",
      message: `scripted model ${file} has no reply 7: the script has 6.`,
    });
  });

  it("resolves a relative path against the cwd option", async () => {
    write("rel.json", '["relative"]');
    const model = createModel("scripted:rel.json", { cwd: dir });
    expect((await model.generate(ask("x"))).text).toBe("relative");
  });

  it("names a missing file", () => {
    const error = thrown(() => createModel(`scripted:${join(dir, "nope.json")}`));
    expect(error.code).toBe("scripted_invalid");
    expect(error.message).toBe(`Scripted model file ${join(dir, "nope.json")} does not exist.`);
  });

  it("names the file and the JSON problem when it is malformed", () => {
    const file = write("bad.json", '[\n  "ok",\n  "unterminated\n]');
    const error = thrown(() => createModel(`scripted:${file}`));
    expect(error.code).toBe("scripted_invalid");
    expect(error.message).toContain(`Scripted model file ${file} is not valid JSON:`);
    expect(error.message).toContain("JSON array of replies");
  });

  it("requires an array", () => {
    const file = write("obj.json", '{"replies": ["a"]}');
    expect(thrown(() => createModel(`scripted:${file}`)).message).toContain("holds an object");
  });

  it("names the element that is not a string", () => {
    const number = write("num.json", '["a", "b", 42]');
    const e1 = thrown(() => createModel(`scripted:${number}`));
    expect(e1.code).toBe("scripted_invalid");
    expect(e1.property).toBe("[2]");
    expect(e1.message).toContain("element 2 is a number (42)");
    expect(e1.message).toContain(number);

    const noText = write("notext.json", '["a", {"reply": "b"}]');
    expect(thrown(() => createModel(`scripted:${noText}`)).message).toContain(
      'element 1 is an object without "text"',
    );

    const extra = write("extra.json", '[{"text": "a", "usage": 3}]');
    const e3 = thrown(() => createModel(`scripted:${extra}`));
    expect(e3.message).toContain('unexpected property "usage"');
    expect(e3.property).toBe("[0].usage");
  });
});

describe("createScriptedModel", () => {
  it("replays from memory, counts what is left and keeps what it was asked", async () => {
    const model = createScriptedModel([
      '{"name":"finish","arguments":{"summary":"done"}}',
      { text: "second" },
    ]);
    expect(model.remaining).toBe(2);
    await model.generate({ system: "S", messages: [{ role: "user", content: "goal" }] });
    expect(model.remaining).toBe(1);
    expect(model.calls).toEqual([{ system: "S", messages: [{ role: "user", content: "goal" }] }]);
    expect((await model.generate(ask("next"))).text).toBe("second");
    await expect(model.generate(ask("more"))).rejects.toThrow(
      "scripted model (in memory) has no reply 3: the script has 2.",
    );
  });

  it("checks the replies up front", () => {
    const error = thrown(() => createScriptedModel(["a", null as unknown as string]));
    expect(error.code).toBe("scripted_invalid");
    expect(error.property).toBe("replies[1]");
    expect(error.message).toContain("element 1 is null");
  });

  it("honours an aborted signal without using up a reply", async () => {
    const model = createScriptedModel(["only"]);
    await expect(model.generate({ ...ask("x"), signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: "model_aborted",
      name: "AbortError",
    });
    expect(model.remaining).toBe(1);
  });
});
