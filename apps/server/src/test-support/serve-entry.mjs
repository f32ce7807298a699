// Test entry: starts the built server the way `capgate serve` will, on port 0, and prints
// `{"url","port"}` as the first stdout line. Options come as JSON in argv[2]; `configFile`
// is passed as `configPath`; `log` goes to stderr. The token comes from $CAPGATE_TOKEN.
import { closeOnSignals, startServer } from "../../dist/index.js";

const { configFile, log, ...options } = JSON.parse(process.argv[2] ?? "{}");
const server = await startServer({
  port: 0,
  ...(configFile ? { configPath: configFile } : {}),
  // Log lines go to stderr so the ready line stays alone on stdout.
  ...(log ? { log: { ...log, stream: process.stderr } } : {}),
  ...options,
});
closeOnSignals(server, {
  onError: (error) => process.stderr.write(`close failed: ${error?.stack ?? error}\n`),
});
process.stdout.write(`${JSON.stringify({ url: server.url, port: server.port })}\n`);
