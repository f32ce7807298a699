// Client under test for the official MCP conformance suite (scripts/mcp-conformance.sh):
// the suite starts a scenario server and runs `node conformance-client.mjs <server-url>`
// with MCP_CONFORMANCE_SCENARIO (and, for some, MCP_CONFORMANCE_CONTEXT) set. Everything
// goes through @capgate/mcp-client as a host would use it: an McpPool with the scenario URL
// as a `url` server, its `oauth` entry built from the scenario's context, and for logins the
// real loopback redirect listener. The suite's authorization servers approve at once, so the
// "person" here is a fetch that opens the printed URL and follows its redirect to 127.0.0.1.
import { McpPool, memoryAuthStore } from "../dist/index.js";
import { startLoopbackRedirect } from "../dist/stdio.js";

const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}");
// The reference client's client ID metadata document URL (used only where the AS supports SEP-991).
const CIMD_URL = "https://conformance-test.local/client-metadata.json";

function sampleArguments(schema) {
  const args = {};
  for (const [key, prop] of Object.entries(schema?.properties ?? {})) {
    const type = Array.isArray(prop.type) ? prop.type[0] : prop.type;
    args[key] =
      type === "number" || type === "integer"
        ? 1
        : type === "boolean"
          ? true
          : type === "array"
            ? []
            : type === "object"
              ? {}
              : "test";
  }
  return args;
}

/** The person's browser: open the authorization URL and follow the redirect to our listener. */
async function actAsBrowser(authorizationUrl) {
  const answer = await fetch(authorizationUrl, { redirect: "manual" });
  const location = answer.headers.get("location");
  if (!location) throw new Error(`the authorization endpoint did not redirect (HTTP ${answer.status})`);
  await fetch(new URL(location, authorizationUrl), { redirect: "manual" });
}

function oauthEntry() {
  if (scenario === "auth/client-credentials-basic")
    return { grant: "client_credentials", clientId: context.client_id, clientSecret: context.client_secret };
  if (scenario === "auth/client-credentials-jwt")
    return {
      grant: "client_credentials",
      clientId: context.client_id,
      privateKey: context.private_key_pem,
      signingAlgorithm: context.signing_algorithm ?? "ES256",
    };
  if (scenario === "auth/pre-registration")
    return { clientId: context.client_id, clientSecret: context.client_secret };
  if (scenario === "auth/cross-app-access-complete-flow")
    return {
      grant: "jwt_bearer",
      clientId: context.client_id,
      clientSecret: context.client_secret,
      identityProvider: {
        tokenEndpoint: context.idp_token_endpoint,
        clientId: context.idp_client_id,
        idToken: context.idp_id_token,
      },
    };
  return { clientName: "capgate-conformance", clientMetadataUrl: CIMD_URL };
}

const auth = scenario.startsWith("auth/");
const loopback = auth
  ? await startLoopbackRedirect({
      onAuthorizationUrl: (authorizationUrl) => {
        console.log(`[${scenario}] authorization URL received; opening it`);
        return actAsBrowser(authorizationUrl);
      },
      timeoutMs: 20_000,
    })
  : undefined;

const pool = new McpPool(
  { conformance: { url, ...(auth ? { oauth: oauthEntry() } : {}) } },
  {
    clientInfo: { name: "capgate-mcp-client", version: "0.1.0" },
    onEvent: (e) => process.stderr.write(`${JSON.stringify(e)}\n`),
    ...(auth ? { authStore: memoryAuthStore(), interactiveAuth: loopback } : {}),
    // Accept with no content: the client must fill in the schema's defaults (SEP-1034).
    onElicitation: async () => ({ action: "accept", content: {} }),
  },
);
let status = 0;
try {
  const tools = await pool.listTools("conformance");
  console.log(`[${scenario}] tools: ${tools.map((t) => t.name).join(", ") || "(none)"}`);
  const calls =
    Array.isArray(context.tool_calls) && context.tool_calls.length > 0
      ? context.tool_calls.map((c) => ({ name: c.name, arguments: c.arguments ?? {} }))
      : scenario === "initialize"
        ? []
        : tools.map((t) => ({ name: t.name, arguments: sampleArguments(t.inputSchema) }));
  for (const call of calls) {
    const result = await pool.callTool("conformance", call.name, call.arguments);
    console.log(`[${scenario}] ${call.name} -> ${result.success ? "ok" : "error"}: ${result.summary}`);
  }
} catch (error) {
  console.error(`[${scenario}] ${error?.code ?? "error"}: ${error?.message ?? error}`);
  status = 1;
} finally {
  await pool.close();
  await loopback?.close();
}
process.exit(status);
