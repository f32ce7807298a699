import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { needs } from "@capgate/test-system-parts";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  action,
  CHROMIUM,
  type ServerProcess,
  startServerProcess,
  waitFor,
} from "./test-support/server-process.js";

const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), "..", "artifacts");
const chromiumPart = needs(["chromium"]);

let server: ServerProcess;
let browser: Browser;

describe.skipIf(chromiumPart.skip)(`web run viewer in Chromium${chromiumPart.note}`, () => {
  beforeAll(async () => {
    server = await startServerProcess();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
      ],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    server?.cleanup();
  });

  it("serves the static page without a token, with a strict CSP and no data", async () => {
    const response = await fetch(`${server.url}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-security-policy")).toContain("default-src 'none'");
    const html = await response.text();
    expect(html).toContain("/viewer.js");
    expect(html).not.toContain(server.token);
    expect((await fetch(`${server.url}/viewer.js`)).status).toBe(200);
    expect((await fetch(`${server.url}/viewer.css`)).status).toBe(200);
  });

  it("shows a run appearing and its events arriving live; approving from the page (once, and for the rest of the run) lets it finish", async () => {
    const page = await browser.newPage({ viewport: { width: 1366, height: 800 } });
    const requests: Array<{ url: string; auth: string | undefined; body: string | null }> = [];
    page.on("request", (r) =>
      requests.push({ url: r.url(), auth: r.headers().authorization, body: r.postData() }),
    );
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    try {
      await page.goto(`${server.url}/#token=${encodeURIComponent(server.token)}`);
      // The token leaves the URL at once.
      await page.waitForFunction("!location.hash.includes('token')");
      expect(page.url()).not.toContain(server.token);
      await page.getByText("No runs yet").waitFor();

      // A run whose goal would be markup if anything used innerHTML.
      // No profile: the inferred one shows as a profile change.
      const goal = `<img src=x onerror="window.__pwned=1"> patch the code in viewer.txt`;
      const response = await server.api("/runs", {
        body: {
          goal,
          approval: "on-risk",
          model: server.script([
            action("capability_call", {
              tool: "fs.write",
              arguments: { path: "viewer.txt", content: "<b>not bold</b>\n" },
            }),
            action("capability_call", {
              tool: "fs.write",
              arguments: { path: "second.txt", content: "2\n" },
            }),
            action("verify", { claim: "viewer.txt exists", command: "test -f viewer.txt" }),
            action("finish", { summary: "wrote viewer.txt" }),
          ]),
        },
      });
      const { id } = (await response.json()) as { id: string };

      // The run appears in the list; open it.
      const item = page.locator(`li[data-run-id="${id}"]`);
      await item.waitFor();
      await expect.poll(() => item.textContent()).toContain("patch the code in viewer.txt");
      await item.locator("button").click();

      // Live: the approval request arrives while the run waits; allow fs.write for the rest
      // of the run on the page: the second fs.write does not ask.
      const timeline = page.locator("#timeline");
      await timeline.locator('li[data-type="approval_requested"]').first().waitFor();
      await timeline.locator("button.approve-run").first().click();
      await timeline.locator('li[data-type="tool_result"]').nth(1).waitFor();
      // verify asks (another tool): answered once.
      await waitFor(
        async () => ((await timeline.locator("button.approve").count()) > 0 ? true : undefined),
        "the verify approval",
      );
      await timeline.locator("button.approve").first().click();
      await timeline.locator('li[data-type="run_ended"]').waitFor();
      expect(await timeline.locator('li[data-type="approval_requested"]').count()).toBe(2);
      const resolvedText = await timeline.locator('li[data-type="approval_resolved"]').allTextContents();
      expect(resolvedText[0]).toMatch(/granted for the rest of the run by api:/);
      expect(resolvedText[1]).toMatch(/fs\.write allowed for this run by grant:/);
      expect(resolvedText[2]).toMatch(/Approval granted by api:/);
      // Each answer named the arguments it was shown; the first asked for the run.
      const answers = requests
        .filter((r) => /\/approvals\//.test(r.url))
        .map((r) => JSON.parse(r.body ?? "{}") as Record<string, unknown>);
      expect(answers).toEqual([
        { approve: true, scope: "run", argumentsHash: expect.stringMatching(/^[0-9a-f]{64}$/) },
        { approve: true, scope: "once", argumentsHash: expect.stringMatching(/^[0-9a-f]{64}$/) },
      ]);

      const types = await timeline
        .locator("li")
        .evaluateAll((items) => items.map((li) => li.getAttribute("data-type")));
      expect(types[0]).toBe("run_started");
      expect(types).toEqual(
        expect.arrayContaining([
          "profile_changed",
          "tool_called",
          "approval_requested",
          "approval_resolved",
          "tool_result",
          "verified",
          "finished",
        ]),
      );
      expect(types.at(-1)).toBe("run_ended");
      const seqs = await timeline
        .locator("li")
        .evaluateAll((items) => items.map((li) => Number(li.getAttribute("data-seq"))));
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
      await expect.poll(() => item.textContent()).toContain("finished");

      // Text stayed text.
      expect(await page.evaluate("window.__pwned")).toBeUndefined();
      expect(await page.locator("#timeline img").count()).toBe(0);
      expect(await timeline.textContent()).toContain("<b>not bold</b>");

      // Every data request carried the bearer header; none put the token in a URL.
      const data = requests.filter((r) => /\/runs/.test(r.url));
      expect(data.length).toBeGreaterThan(0);
      for (const r of data) {
        expect(r.auth).toBe(`Bearer ${server.token}`);
        expect(r.url).not.toContain(server.token);
      }
      expect(errors).toEqual([]);

      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, "viewer-run-end.png") });
      await page.evaluate("document.querySelector('.run-pane').scrollTop = 0");
      await page.screenshot({ path: join(ARTIFACTS, "viewer-run-start.png") });
    } finally {
      await page.close();
    }
  }, 60_000);

  it("links only http(s) addresses from the server's data (an OAuth login's authorization URL)", async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    // What an MCP server's metadata could make /mcp-logins hold: the page must not link it.
    const startedAt = new Date().toISOString();
    await page.route("**/mcp-logins", (route) =>
      route.fulfill({
        json: {
          logins: [
            {
              server: "evil",
              auth: { state: "logged_out" },
              pending: { authorizationUrl: "javascript:window.__pwned=1", startedAt },
            },
            {
              server: "data",
              auth: { state: "logged_out" },
              pending: { authorizationUrl: "data:text/html,<script>parent.__pwned=1</script>", startedAt },
            },
            {
              server: "good",
              auth: { state: "logged_out" },
              pending: { authorizationUrl: "https://auth.example/authorize?state=1", startedAt },
            },
          ],
        },
      }),
    );
    try {
      await page.goto(`${server.url}/#token=${encodeURIComponent(server.token)}`);
      await page.locator('.mcp-login[data-server="good"] a').waitFor();
      expect(await page.locator('.mcp-login[data-server="good"] a').getAttribute("href")).toBe(
        "https://auth.example/authorize?state=1",
      );
      for (const name of ["evil", "data"]) {
        const item = page.locator(`.mcp-login[data-server="${name}"]`);
        await item.waitFor();
        expect(await item.locator("a").count()).toBe(0);
        expect(await item.textContent()).toContain("not an http(s) URL");
      }
      // No element in the page's body carries a script or data URL.
      expect(
        await page.evaluate(
          "[...document.body.querySelectorAll('[href],[src]')].filter((n) => /^(javascript|data):/i.test(n.getAttribute('href') ?? n.getAttribute('src') ?? '')).length",
        ),
      ).toBe(0);
      expect(await page.evaluate("window.__pwned")).toBeUndefined();
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 30_000);

  it("shows a script's nested calls under their script.run, and its nested approval is answered from the page", async () => {
    const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    try {
      await page.goto(`${server.url}/#token=${encodeURIComponent(server.token)}`);
      const response = await server.api("/runs", {
        body: {
          goal: "patch the code with a script",
          profile: "Coder",
          approval: "on-risk",
          model: server.script([
            action("capability_load", { name: "script" }),
            action("capability_call", {
              tool: "script.run",
              arguments: {
                // A long content first, the path last, and a right-to-left override in the content.
                source:
                  'await tools.fs.write({ content: "from a script\\u202e" + "x".repeat(600) + "\\n", path: "nested.txt" }); const r = await tools.fs.read({ path: "nested.txt" }); return r.data.content.slice(0, 13);',
              },
            }),
            action("mark_impossible", { reason: "shown" }),
          ]),
        },
      });
      const { id } = (await response.json()) as { id: string };
      const item = page.locator(`li[data-run-id="${id}"]`);
      await item.waitFor();
      await item.locator("button").click();
      const timeline = page.locator("#timeline");
      // The script waits on the operator: the nested fs.write's approval is on the page.
      await timeline.locator('li[data-type="approval_requested"]').first().waitFor();
      const asked = await timeline.locator('li[data-type="approval_requested"]').first().textContent();
      expect(asked).toContain("fs.write");
      // The path is shown whatever came before it, and the override only as its escape.
      expect(asked).toContain('path: "nested.txt"');
      expect(asked).toContain("\\u202e");
      expect(asked).not.toContain("\u202e");
      await timeline.locator("button.approve").first().click();
      await timeline.locator('li[data-type="run_ended"]').waitFor();
      const nested = await timeline
        .locator("li.nested")
        .evaluateAll((items) =>
          items.map((li) => [li.getAttribute("data-type"), li.querySelector(".event-title")?.textContent]),
        );
      expect(nested).toEqual([
        ["tool_called", "↳ script.run call 1: Call fs.write (write)"],
        ["tool_result", expect.stringMatching(/^↳ script\.run call 1: fs\.write → ok \(\d+ ms\)$/)],
        ["tool_called", "↳ script.run call 2: Call fs.read (read)"],
        ["tool_result", expect.stringMatching(/^↳ script\.run call 2: fs\.read → ok \(\d+ ms\)$/)],
      ]);
      const result = timeline.locator('li[data-type="tool_result"]:not(.nested)').last();
      expect(await result.textContent()).toContain("from a script");
      expect(errors).toEqual([]);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, "viewer-script-nested.png"), fullPage: true });
    } finally {
      await page.close();
    }
  }, 90_000);

  it("says what to do when opened without a token", async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${server.url}/`);
      await page.locator("#no-token").waitFor({ state: "visible" });
      expect(await page.locator("#no-token").textContent()).toContain("#token=");
    } finally {
      await page.close();
    }
  }, 30_000);
});
