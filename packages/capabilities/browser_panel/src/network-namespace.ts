import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import { join } from "node:path";
import { findSystemBinary } from "@capgate/sandbox";

/** Chromium's proxy port inside its namespace: the namespace has nothing else, so any port does. */
const INSIDE_PORT = 8118;
/** A unix socket's path may hold 107 bytes on Linux (a profile root is chosen short enough for it). */
export const MAX_SOCKET_PATH = 107;
/** The relay's socket, inside the browser's profile directory. */
export const PROXY_SOCKET_NAME = "proxy.sock";

/** How to start Chromium inside a network namespace whose only way out is the guard proxy. */
export interface NamespacedChromium {
  /** The executable to give Playwright: a script that starts Chromium in the namespace. */
  readonly executable: string;
  /** The proxy as Chromium inside the namespace reaches it. */
  readonly proxyServer: string;
  /** Stop the bridge's host side (the namespace ends with Chromium). */
  close(): Promise<void>;
}

/**
 * A network namespace of its own (only a loopback device, nothing listening on it), the rest of
 * the system as it is; ended with its parent. No pid namespace: the browser's pid, read over
 * DevTools, stays the host's.
 */
const BWRAP_ARGS = ["--unshare-net", "--die-with-parent", "--dev-bind", "/", "/"];

/**
 * /run holds the host's sockets on disk (the D-Bus system bus, $XDG_RUNTIME_DIR's session bus
 * and sound server), which a network namespace does not hide: an empty tmpfs there — unless
 * the profile itself lives under /run.
 */
const runHidden = (profile: string): string[] => (profile.startsWith("/run/") ? [] : ["--tmpfs", "/run"]);

interface Tools {
  bwrap: string;
  socat: string;
  bash: string;
  /** util-linux's setpriv, to give socat a parent-death signal (absent: socat may outlive a killed script). */
  setpriv: string | undefined;
}

let available: Promise<Tools | undefined> | undefined;

/**
 * bubblewrap, socat and bash (from the system directories, never $PATH), when all three are
 * installed and bubblewrap can make a network namespace here: probed once per process,
 * without blocking the event loop (user namespaces may be off, as in some containers).
 */
function namespaceTools(): Promise<Tools | undefined> {
  available ??= (async () => {
    const bwrap = findSystemBinary("bwrap");
    const socat = findSystemBinary("socat");
    const bash = findSystemBinary("bash");
    if (!bwrap || !socat || !bash) return undefined;
    const works = await new Promise<boolean>((resolve) => {
      execFile(bwrap, [...BWRAP_ARGS, "--", bash, "-c", "true"], { timeout: 10_000 }, (error) =>
        resolve(error === null),
      );
    });
    return works ? { bwrap, socat, bash, setpriv: findSystemBinary("setpriv") } : undefined;
  })();
  return available;
}

/**
 * Single-quoted for sh. (@capgate/shell-policy's `shellQuote` quotes the same way; this one
 * line is not worth the parser package as a dependency.)
 */
const quote = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * Prepare Chromium (`chromium`) to run in a network namespace whose one way out is the guard
 * proxy at 127.0.0.1:`proxyPort`: a unix socket in `profile` relays to the proxy, socat inside
 * the namespace bridges 127.0.0.1:8118 to that socket, and Chromium is told to use that port.
 * Whatever Chromium sends that is not through its proxy — WebRTC's UDP, multicast DNS, a
 * connection a future feature makes on its own — finds no route. Undefined when bubblewrap,
 * socat or user namespaces are missing here: the caller runs Chromium as before (proxy only).
 */
export async function namespacedChromium(
  chromium: string,
  profile: string,
  proxyPort: number,
): Promise<NamespacedChromium | undefined> {
  const tools = await namespaceTools();
  const socketPath = join(profile, PROXY_SOCKET_NAME);
  if (!tools || Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) return undefined;
  const sockets = new Set<Socket>();
  const relay = createServer((inside) => {
    const outside = connect(proxyPort, "127.0.0.1");
    for (const s of [inside, outside]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {
        inside.destroy();
        outside.destroy();
      });
    }
    inside.pipe(outside).pipe(inside);
  });
  await new Promise<void>((resolve, reject) => {
    relay.once("error", reject);
    relay.listen(socketPath, () => resolve());
  });
  const hexPort = INSIDE_PORT.toString(16).toUpperCase().padStart(4, "0");
  // Inside: start the bridge, wait until it listens (read from /proc/net/tcp, no connection
  // made), run Chromium, and end the bridge when Chromium ends (there is no pid namespace to
  // end it). A TERM or INT for the script goes on to Chromium.
  // socat dies with the script even when the script is killed (SIGKILL of capgate or bubblewrap).
  const deathSignal = tools.setpriv ? `${quote(tools.setpriv)} --pdeathsig KILL ` : "";
  const inner = [
    `${deathSignal}${quote(tools.socat)} TCP-LISTEN:${INSIDE_PORT},bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:${quote(socketPath)} </dev/null >/dev/null 2>&1 &`,
    "bridge=$!",
    "i=0",
    `while ! grep -q ': 0100007F:${hexPort} 00000000:0000 0A' /proc/net/tcp; do`,
    '  i=$((i+1)); if [ "$i" -gt 2500 ]; then echo "capgate browser: the network bridge did not start" >&2; kill "$bridge"; exit 125; fi',
    "  sleep 0.002",
    "done",
    `${quote(chromium)} "$@" &`,
    "browser=$!",
    `trap 'kill -TERM "$browser" 2>/dev/null' TERM INT HUP`,
    'wait "$browser"; code=$?',
    // A trapped signal interrupts the first wait: wait for Chromium to end.
    'while kill -0 "$browser" 2>/dev/null; do wait "$browser"; code=$?; done',
    'kill "$bridge" 2>/dev/null',
    'exit "$code"',
  ].join("\n");
  const executable = join(profile, "chromium-in-namespace");
  writeFileSync(
    executable,
    [
      "#!/bin/sh",
      `exec ${[tools.bwrap, ...BWRAP_ARGS, ...runHidden(profile)].map(quote).join(" ")} -- ${quote(tools.bash)} --noprofile --norc -c ${quote(inner)} capgate-browser "$@"`,
      "",
    ].join("\n"),
    // A new file: never one already there, nor through a link someone left in its place.
    { mode: 0o700, flag: "wx" },
  );
  return {
    executable,
    proxyServer: `http://127.0.0.1:${INSIDE_PORT}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        relay.close(() => resolve());
      }),
  };
}
