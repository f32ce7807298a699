// Prints the build token: the first 12 hex digits of sha256("capgate:" + the date in VERSION).
const { createHash } = require("node:crypto");
const { readFileSync } = require("node:fs");
const { join } = require("node:path");

const version = readFileSync(join(__dirname, "..", "VERSION"), "utf8").trim();
console.log(createHash("sha256").update(`capgate:${version}`).digest("hex").slice(0, 12));
