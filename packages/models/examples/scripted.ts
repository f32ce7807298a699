// A scripted model replays fixed replies: the way to test an agent loop, run a demo offline or
// reproduce a recorded trace. `scripted:<file>` does the same from a JSON array in a file.
import { createScriptedModel } from "../src/index.js";

export async function scriptedExample(): Promise<string[]> {
  const model = createScriptedModel([
    '{"name": "capability_search", "arguments": {"query": "read a file"}}',
    { text: '{"name": "finish", "arguments": {"summary": "done"}}' },
  ]);
  const replies: string[] = [];
  for (const question of ["What do you do first?", "And then?"]) {
    const reply = await model.generate({
      system: "Reply with one JSON action.",
      messages: [{ role: "user", content: question }],
    });
    replies.push(reply.text);
  }
  console.log(model.describe(), "answered", model.calls.length, "calls");
  return replies;
}
