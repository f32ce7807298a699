import { describe, expect, it } from "vitest";
import { elicitationFields, parseElicitationAnswer } from "./elicitation.js";

const params = {
  mode: "form" as const,
  message: "Settings?",
  requestedSchema: {
    type: "object" as const,
    properties: {
      region: {
        type: "string" as const,
        title: "Region",
        enum: ["eu", "us"],
        enumNames: ["Europe", "USA"],
        default: "eu",
      },
      replicas: { type: "integer" as const, minimum: 1, maximum: 9 },
      dryRun: { type: "boolean" as const, default: true },
      name: { type: "string" as const, minLength: 2 },
    },
    required: ["replicas", "name"],
  },
};

describe("elicitation forms", () => {
  it("flattens a form-mode schema into fields with defaults, choices and limits", () => {
    const fields = elicitationFields(params);
    expect(fields.map((f) => f.name)).toEqual(["region", "replicas", "dryRun", "name"]);
    expect(fields[0]).toMatchObject({
      label: "Region",
      default: "eu",
      required: false,
      choices: [
        { value: "eu", label: "Europe" },
        { value: "us", label: "USA" },
      ],
    });
    expect(fields[1]).toMatchObject({ type: "integer", required: true, minimum: 1, maximum: 9 });
  });

  it("parses typed answers and says what to type instead", () => {
    const [region, replicas, dryRun, name] = elicitationFields(params);
    expect(parseElicitationAnswer(region!, "")).toEqual({ ok: true });
    expect(parseElicitationAnswer(region!, "2")).toEqual({ ok: true, value: "us" });
    expect(parseElicitationAnswer(region!, "europe")).toEqual({ ok: true, value: "eu" });
    expect(parseElicitationAnswer(region!, "mars")).toMatchObject({ ok: false });
    expect(parseElicitationAnswer(replicas!, "")).toEqual({ ok: false, message: "replicas is required." });
    expect(parseElicitationAnswer(replicas!, "2.5")).toMatchObject({ ok: false });
    expect(parseElicitationAnswer(replicas!, "12")).toEqual({ ok: false, message: "At most 9." });
    expect(parseElicitationAnswer(replicas!, "4")).toEqual({ ok: true, value: 4 });
    expect(parseElicitationAnswer(dryRun!, "n")).toEqual({ ok: true, value: false });
    expect(parseElicitationAnswer(dryRun!, "maybe")).toMatchObject({ ok: false });
    expect(parseElicitationAnswer(name!, "x")).toMatchObject({ ok: false });
  });
});
