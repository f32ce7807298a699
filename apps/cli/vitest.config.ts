import { defineConfig } from "vitest/config";

// These tests drive the built CLI as a user would: each spawns a node process.
export default defineConfig({
  test: { testTimeout: 60_000, hookTimeout: 60_000 },
});
