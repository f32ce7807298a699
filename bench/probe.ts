import { builtinCapabilities, createDefaultRegistry } from "@capgate/harness";
const r = createDefaultRegistry();
for (const c of builtinCapabilities()) r.register(c.manifest);
for (const q of ["post data to a webhook","create a new folder","edit a value in settings.json","view the history of a file","open the contents of config.yaml","think step by step","list databases","run the tests"]) {
  const caps = r.search(q).map((h) => `${h.capability}:${h.score.toFixed(2)}:${h.match[0]}`).join(" ");
  const tools = r.search(q, { level: "tool", limit: 3 }).map((h) => `${h.tool}:${h.score.toFixed(2)}`).join(" ");
  console.log(`${q} | ${caps} | ${tools}`);
}
