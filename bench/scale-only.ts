process.env.CAPGATE_METATOOL_DIR = "/nonexistent";
const m = await import("./src/benches/search.js");
for (const f of await m.run()) console.log(f.key, f.value, f.target ?? "");
