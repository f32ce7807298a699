import { approvalText } from "@capgate/schema";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";

/** What the gate asks its client to approve: the tool, its risk, the call's arguments and one line for a person. */
export interface GateApprovalRequest {
  tool: string;
  risk: string;
  /** The call's arguments: the form lists each, escaped, as every approval surface does. */
  arguments?: unknown;
  description: string;
}

/**
 * Approvals for the gate served over MCP (`capgate mcp serve`): each is asked of the
 * client's user with an elicitation request (a yes/no form), so a write a script makes
 * under `--approval on-risk` pauses it until the person in Claude Desktop or Cursor answers.
 * A client that does not support elicitation cannot be asked: the call is refused, saying so.
 * `server` is read when a request is asked (the server is made after the session's host).
 */
export function elicitingApprover(
  server: () => Server | undefined,
): (request: GateApprovalRequest, signal: AbortSignal) => Promise<boolean> {
  return async (request, signal) => {
    const gate = server();
    if (!gate?.getClientCapabilities()?.elicitation)
      throw new Error(
        "the MCP client cannot be asked (it does not support elicitation); use a client that does, or --approval never",
      );
    // The same rendering as the terminal's prompt: every argument on its own line (a long
    // one cannot push the path out of view), control and bidi characters escaped.
    const [head, ...rest] = approvalText(request).split("\n");
    const answer = await gate.elicitInput(
      {
        message: [`Allow ${head}?`, ...rest].join("\n"),
        requestedSchema: {
          type: "object",
          properties: {
            approve: {
              type: "boolean",
              title: `Run ${head}`,
              description: "Yes runs it; no refuses it, and the agent is told so.",
              default: false,
            },
          },
          required: ["approve"],
        },
      },
      // A person answers: no protocol timeout beyond the host's own approval wait.
      { signal, timeout: 2_147_483_647 },
    );
    return answer.action === "accept" && answer.content?.approve === true;
  };
}
