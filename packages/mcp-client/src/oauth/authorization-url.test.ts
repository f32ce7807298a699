import { describe, expect, it } from "vitest";
import { memoryAuthStore } from "./auth-store.js";
import { McpOAuthProvider } from "./oauth-provider.js";

/** A person's side that records what it was shown. */
function interactive(shown: string[]) {
  return {
    redirectUrl: "http://127.0.0.1:1/callback",
    onAuthorizationUrl: (url: URL) => {
      shown.push(url.href);
    },
    waitForCode: async () => "code",
  };
}

describe("the authorization URL a server names", () => {
  // It comes from the server's metadata and is shown as a link (viewer) or printed (CLI).
  it.each(["javascript:alert(document.cookie)", "data:text/html,<script>1</script>", "file:///etc/passwd"])(
    "%s is refused and never shown",
    async (href) => {
      const shown: string[] = [];
      const provider = await McpOAuthProvider.open(
        "evil",
        "https://mcp.example/",
        {},
        memoryAuthStore(),
        interactive(shown),
      );
      await expect(provider.redirectToAuthorization(new URL(href))).rejects.toMatchObject({
        code: "mcp_auth_failed",
        message: expect.stringContaining("only http(s) addresses"),
      });
      expect(shown).toEqual([]);
    },
  );

  it("an https page is shown", async () => {
    const shown: string[] = [];
    const provider = await McpOAuthProvider.open(
      "good",
      "https://mcp.example/",
      {},
      memoryAuthStore(),
      interactive(shown),
    );
    await provider.redirectToAuthorization(new URL("https://auth.example/authorize?x=1"));
    expect(shown).toEqual(["https://auth.example/authorize?x=1"]);
  });
});
