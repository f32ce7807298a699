// The goal loop over a hand-built environment (what @capgate/harness does for you).
import { FileRunStore, MemoryStore, runGoal } from "@capgate/loop";
import { createScriptedModel } from "@capgate/models";
import { profiles } from "@capgate/profiles";
import { Registry } from "@capgate/registry";
import { CapabilitySet, createHostResources, DEFAULT_LIMITS, minimalEnv } from "@capgate/tools";

export async function main(workspace: string, stateDir: string): Promise<string> {
  const capabilities = new CapabilitySet([]); // add capabilities: e.g. the built-ins from @capgate/harness
  const registry = new Registry();
  const result = await runGoal(
    {
      registry,
      capabilities,
      profiles: { Orchestrator: profiles.Orchestrator },
      stateDir,
      store: new FileRunStore(stateDir),
      memory: new MemoryStore(stateDir),
      policy: {},
      limits: DEFAULT_LIMITS,
      resources: createHostResources(),
      env: minimalEnv(),
    },
    {
      goal: "check that the workspace has a README",
      profile: "Orchestrator",
      workspace,
      model: createScriptedModel([
        '{"name": "verify", "arguments": {"claim": "README exists", "command": "test -f README.md"}}',
        '{"name": "finish", "arguments": {"summary": "README.md is there"}}',
      ]),
    },
  );
  return `${result.outcome}: ${result.summary ?? result.error ?? ""}`;
}
