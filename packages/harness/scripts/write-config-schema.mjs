// Writes schemas/capgate.config.schema.json from the built configSchema (run after build).
import { writeFileSync } from "node:fs";
import { configSchema } from "../dist/index.js";

writeFileSync(
  new URL("../schemas/capgate.config.schema.json", import.meta.url),
  `${JSON.stringify(configSchema, null, 2)}\n`,
);
console.log("wrote schemas/capgate.config.schema.json");
