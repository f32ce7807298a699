import { ModelError } from "./errors.js";
import { describeValue } from "./options.js";
import type { GenerateRequest } from "./types.js";

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Checks a generate() request before anything is sent, naming the first bad field — a
 * malformed request is a bug in the caller, and a provider's 400 would say less.
 */
export function checkRequest(request: GenerateRequest, checkTools: boolean): void {
  if (typeof request !== "object" || request === null) {
    throw bad("request", `generate() takes { system, messages, signal? }; got ${describeValue(request)}.`);
  }
  if (typeof request.system !== "string") {
    throw bad("system", `system must be a string; got ${describeValue(request.system)}.`);
  }
  if (!Array.isArray(request.messages) || request.messages.length === 0) {
    throw bad(
      "messages",
      `messages must be a non-empty array of { role: "user" | "assistant", content: string }; got ${describeValue(request.messages)}${Array.isArray(request.messages) ? " with no messages" : ""}.`,
    );
  }
  request.messages.forEach((message, i) => {
    const at = `messages[${i}]`;
    if (typeof message !== "object" || message === null) {
      throw bad(at, `${at} must be { role, content }; got ${describeValue(message)}.`);
    }
    if (message.role !== "user" && message.role !== "assistant") {
      throw bad(
        `${at}.role`,
        `${at}.role must be "user" or "assistant" (the system prompt goes in \`system\`); got ${describeValue(message.role)}.`,
      );
    }
    if (typeof message.content !== "string") {
      throw bad(`${at}.content`, `${at}.content must be a string; got ${describeValue(message.content)}.`);
    }
    for (const key of Object.keys(message)) {
      if (key !== "role" && key !== "content" && key !== "images") {
        throw bad(
          `${at}.${key}`,
          `${at} has an unexpected property "${key}"; a message is { role, content, images? }.`,
        );
      }
    }
    if (message.images !== undefined) {
      if (message.role !== "user" || !Array.isArray(message.images))
        throw bad(
          `${at}.images`,
          `${at}.images must be an array on a user message; got ${describeValue(message.images)}.`,
        );
      message.images.forEach((image, j) => {
        if (
          typeof image !== "object" ||
          image === null ||
          typeof image.data !== "string" ||
          typeof image.mimeType !== "string" ||
          !image.mimeType.startsWith("image/")
        )
          throw bad(
            `${at}.images[${j}]`,
            `${at}.images[${j}] must be { data: base64 string, mimeType: "image/…" }; got ${describeValue(image)}.`,
          );
      });
    }
  });
  if (request.signal !== undefined && !(request.signal instanceof AbortSignal)) {
    throw bad("signal", `signal must be an AbortSignal; got ${describeValue(request.signal)}.`);
  }
  if (!checkTools || request.tools === undefined) return;
  if (!Array.isArray(request.tools)) {
    throw bad(
      "tools",
      `tools must be an array of { name, description, inputSchema }; got ${describeValue(request.tools)}.`,
    );
  }
  const seen = new Set<string>();
  request.tools.forEach((tool, i) => {
    const at = `tools[${i}]`;
    if (typeof tool !== "object" || tool === null) {
      throw bad(at, `${at} must be { name, description, inputSchema }; got ${describeValue(tool)}.`);
    }
    if (typeof tool.name !== "string" || !TOOL_NAME.test(tool.name)) {
      throw bad(
        `${at}.name`,
        `${at}.name must be 1–64 letters, digits, "_" or "-" (what providers accept as a function name); got ${describeValue(tool.name)}.`,
      );
    }
    if (seen.has(tool.name)) throw bad(`${at}.name`, `${at}.name "${tool.name}" is offered twice.`);
    seen.add(tool.name);
    if (typeof tool.description !== "string") {
      throw bad(
        `${at}.description`,
        `${at}.description must be a string; got ${describeValue(tool.description)}.`,
      );
    }
    const schema = tool.inputSchema;
    if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
      throw bad(
        `${at}.inputSchema`,
        `${at}.inputSchema must be a JSON Schema object; got ${describeValue(schema)}.`,
      );
    }
    if (schema.type !== undefined && schema.type !== "object") {
      throw bad(
        `${at}.inputSchema.type`,
        `${at}.inputSchema must describe an object (type "object"), since tool arguments are an object; got type ${describeValue(schema.type)}.`,
      );
    }
  });
}

function bad(property: string, message: string): ModelError {
  return new ModelError("invalid_request", message, { property });
}
