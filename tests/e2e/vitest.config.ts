import { defineConfig } from "vitest/config";

// These tests drive built packages, tarballs and the CLI as a user would: slow by nature.
export default defineConfig({
  test: { testTimeout: 600_000, hookTimeout: 600_000 },
});
