// A new frontend in a few lines: config → harness → a goal run with live events.
import { createHarness, loadConfig } from "@capgate/harness";

export async function main(goal: string): Promise<number> {
  const harness = await createHarness({ config: loadConfig() }); // ./capgate.config.json, if any
  try {
    const result = await harness.runGoal({
      goal,
      model: process.env.CAPGATE_MODEL ?? "openai:gpt-4o-mini",
      onEvent: (event) => {
        if (event.type === "tool_called") console.log(`→ ${event.tool}`);
        if (event.type === "verified") console.log(event.passed ? "verify passed" : "verify failed");
      },
    });
    console.log(`${result.outcome} in ${result.steps} steps — trace: ${result.tracePath}`);
    return result.outcome === "finished" ? 0 : 1;
  } finally {
    await harness.close(); // MCP sessions, the browser, background processes
  }
}
