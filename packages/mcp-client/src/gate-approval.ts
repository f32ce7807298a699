import type { Server } from "@modelcontextprotocol/sdk/server/index.js";

/** What the gate asks its client to approve: one line for a person, the tool and its risk. */
export interface GateApprovalRequest {
  tool: string;
  risk: string;
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
    const answer = await gate.elicitInput(
      {
        message: `Allow ${request.description}?`,
        requestedSchema: {
          type: "object",
          properties: {
            approve: {
              type: "boolean",
              title: `Run ${request.tool} (${request.risk})`,
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
