import assert from "node:assert/strict";
import { test } from "node:test";
import { pathToFileURL } from "node:url";

const { slugify } = await import(pathToFileURL(`${process.env.EVAL_WORKSPACE}/src/slugify.js`).href);

test("slugify", () => {
  assert.equal(slugify("Hello, World!"), "hello-world");
  assert.equal(slugify("  Café au lait  "), "caf-au-lait");
  assert.equal(slugify("---A--b---"), "a-b");
  assert.equal(slugify("Release 2.0 (beta)"), "release-2-0-beta");
  assert.equal(slugify(""), "");
});
