import { describe, expect, it } from "vitest";
import * as server from "./index.js";

describe("@capgate/server public surface", () => {
  it("exports exactly these names", () => {
    expect(Object.keys(server).sort()).toEqual(["BODY_LIMIT_BYTES", "closeOnSignals", "startServer"]);
    expect(server.BODY_LIMIT_BYTES).toBe(1024 * 1024);
  });
});
