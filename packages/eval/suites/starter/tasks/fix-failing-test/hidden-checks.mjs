import assert from "node:assert/strict";
import { test } from "node:test";
import { pathToFileURL } from "node:url";

const { add, mean } = await import(pathToFileURL(`${process.env.EVAL_WORKSPACE}/src/math.js`).href);

test("add", () => {
  assert.equal(add(2, 3), 5);
  assert.equal(add(-4, 4), 0);
});
test("mean", () => assert.equal(mean([1, 2, 3, 6]), 3));
