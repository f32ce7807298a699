import { describe, expect, it } from "vitest";
import * as api from "./index.js";

// Adding or removing a runtime export is an API decision: this list makes it visible in review.
describe("@capgate/harness public surface", () => {
  it("exports exactly these runtime names", () => {
    expect(Object.keys(api).sort()).toEqual([
      "CONFIG_FILE_NAME",
      "InvalidConfigError",
      "RELOADABLE_FIELDS",
      "SANDBOX_OFF_WARNING",
      "capabilityProblems",
      "configSchema",
      "createDefaultRegistry",
      "createHarness",
      "defaultStateDir",
      "describeReload",
      "findPackageDir",
      "loadConfig",
      "packageEntry",
      "parseConfig",
      "readCapabilityManifest",
      "resolveConfigPath",
      "watchConfig",
      "withCapabilityPlugins",
    ]);
  });
});
