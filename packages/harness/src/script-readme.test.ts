// The script capability's README example, run as a test so it keeps compiling and keeps telling the truth.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { createHarness } from "./harness.js";

it("README example (capability-script): a script over fs through the harness", async () => {
  const workspace = mkdtempSync(join(tmpdir(), "readme-script-"));
  mkdirSync(join(workspace, "src"));
  writeFileSync(join(workspace, "src", "a.ts"), "// TODO: one\nconst a = 1;\n");
  writeFileSync(join(workspace, "src", "b.ts"), "// TODO: two\n// TODO: three\n");
  const harness = await createHarness({ workspace, stateDir: join(workspace, ".state-dir") });
  const { result } = await harness.callTool("script.run", {
    source: `
    const listed = await tools.fs.glob({ pattern: "src/**/*.ts" });
    let todo = 0;
    for (const path of listed.data.files) {
      const page = await tools.fs.read({ path });
      todo += page.data.content.split("\\n").filter((line) => line.includes("TODO")).length;
    }
    console.log("files:", listed.data.files.length);
    return { todo };`,
  });
  expect(result.summary).toMatch(
    /^script returned \(3 tool calls, \d+ ms\):\n\{"todo":3\}\nconsole \(1 line\):\nfiles: 2$/,
  );
  await harness.close();
});
