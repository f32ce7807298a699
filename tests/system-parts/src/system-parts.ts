import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** The parts of the machine that some tests need for real. */
export type SystemPart =
  | "bwrap"
  | "socat"
  | "curl"
  | "chromium"
  | "xvfb"
  | "xdotool"
  | "xdpyinfo"
  | "imagemagick"
  | "postgres"
  | "git"
  | "python3";

/** What is known about one part here. */
export interface PartStatus {
  readonly part: SystemPart;
  readonly available: boolean;
  /** Why it is not available, and how to install it (undefined when it is). */
  readonly missing?: string;
}

/** How to find a part: where it lives, a check that it actually works, the Debian package. */
interface PartSpec {
  readonly find: () => string | undefined;
  /** Returns why it does not work, or undefined. */
  readonly works?: (path: string) => string | undefined;
  readonly what: string;
  readonly debian: string;
}

// Where the product itself looks (absolute system paths, never $PATH): a part is available
// to a test exactly when it is available to the code under test.
const SYSTEM_DIRS = ["/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin"];

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function inSystemDirs(name: string): () => string | undefined {
  return () => SYSTEM_DIRS.map((dir) => join(dir, name)).find(executable);
}

/** The product's default (`DEFAULT_BWRAP`): the policy names no other path in tests. */
const BWRAP = "/usr/bin/bwrap";

// bubblewrap can be installed yet unable to start a sandbox (no unprivileged user
// namespaces): that is "not available" too, or every sandboxed test would fail with it.
function bwrapWorks(path: string): string | undefined {
  const r = spawnSync(
    path,
    [
      "--unshare-all",
      "--die-with-parent",
      "--ro-bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--proc",
      "/proc",
      "--",
      "true",
    ],
    { timeout: 30_000, encoding: "utf8", env: {} },
  );
  if (r.status === 0) return undefined;
  const detail = (r.stderr || r.error?.message || `exit ${r.status}`).trim().split("\n")[0];
  return `${path} cannot start a sandbox here (${detail}); it needs unprivileged user namespaces`;
}

function postgresBin(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const bin = readdirSync(root)
    .map((version) => join(root, version, "bin"))
    .find((dir) => executable(join(dir, "initdb")) && executable(join(dir, "pg_ctl")));
  return bin;
}

const PARTS: Record<SystemPart, PartSpec> = {
  bwrap: {
    find: () => (executable(BWRAP) ? BWRAP : undefined),
    works: bwrapWorks,
    what: `bubblewrap (${BWRAP})`,
    debian: "bubblewrap",
  },
  socat: { find: inSystemDirs("socat"), what: "socat", debian: "socat" },
  curl: { find: inSystemDirs("curl"), what: "curl", debian: "curl" },
  chromium: {
    // The browser capability's DEFAULT_BROWSER_EXECUTABLE, or the one the server tests are pointed at.
    find: () => {
      const path = process.env.CAPGATE_CHROMIUM ?? "/usr/bin/chromium";
      return executable(path) ? path : undefined;
    },
    what: `Chromium (${process.env.CAPGATE_CHROMIUM ?? "/usr/bin/chromium"})`,
    debian: "chromium",
  },
  xvfb: { find: inSystemDirs("Xvfb"), what: "Xvfb", debian: "xvfb" },
  xdotool: { find: inSystemDirs("xdotool"), what: "xdotool", debian: "xdotool" },
  xdpyinfo: { find: inSystemDirs("xdpyinfo"), what: "xdpyinfo", debian: "x11-utils" },
  imagemagick: { find: inSystemDirs("import"), what: "ImageMagick's import", debian: "imagemagick" },
  postgres: {
    find: postgresBin,
    what: "PostgreSQL's server (initdb and pg_ctl under /usr/lib/postgresql/*/bin)",
    debian: "postgresql",
  },
  git: { find: inSystemDirs("git"), what: "git", debian: "git" },
  python3: { find: inSystemDirs("python3"), what: "python3", debian: "python3" },
};

const cache = new Map<SystemPart, PartStatus>();

/** Whether one part is here and works (checked once per process). */
export function partStatus(part: SystemPart): PartStatus {
  let status = cache.get(part);
  if (!status) {
    const spec = PARTS[part];
    const path = spec.find();
    const broken = path === undefined ? undefined : spec.works?.(path);
    status =
      path === undefined
        ? {
            part,
            available: false,
            missing: `${spec.what} is not installed (apt-get install ${spec.debian})`,
          }
        : broken
          ? { part, available: false, missing: broken }
          : { part, available: true };
    cache.set(part, status);
  }
  return status;
}

/** Whether tests that need system parts must run — and fail when a part is missing — rather than skip (CI sets it). */
export function systemTestsRequired(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.CAPGATE_REQUIRE_SYSTEM_TESTS;
  return value !== undefined && value !== "" && value !== "0";
}

/** The answer for a group of tests that needs some parts. */
export interface Needs {
  /** True when a part is missing and the tests are to be skipped. */
  readonly skip: boolean;
  /** Why they are skipped: "" when they run, else " (skipped: …)" to append to a describe/it name. */
  readonly note: string;
  /** The missing parts' reasons. */
  readonly missing: readonly string[];
}

/**
 * What a group of tests that needs `parts` should do here: run when every part is
 * available; skip, with the reason in `note`, when one is missing; and when
 * CAPGATE_REQUIRE_SYSTEM_TESTS is set, throw instead — at collection, so the test file
 * fails naming what is missing rather than passing on a machine that cannot run it.
 */
export function needs(parts: readonly SystemPart[], env: NodeJS.ProcessEnv = process.env): Needs {
  return decide(
    parts.map((part) => partStatus(part)),
    systemTestsRequired(env),
  );
}

/** The decision of `needs`, from statuses (separate so it is testable without changing the machine). */
export function decide(statuses: readonly PartStatus[], required: boolean): Needs {
  const missing = statuses.flatMap((s) => (s.available ? [] : [s.missing ?? `${s.part} is missing`]));
  if (missing.length === 0) return { skip: false, note: "", missing };
  if (required) {
    throw new Error(
      `CAPGATE_REQUIRE_SYSTEM_TESTS is set, so these tests must run, but ${missing.join("; ")}.`,
    );
  }
  return { skip: true, note: ` (skipped: ${missing.join("; ")})`, missing };
}

/**
 * The shell settings for tests that merely run commands (not tests of the sandbox):
 * `{}` — the sandbox on, as users get it — where bubblewrap works or is required; and
 * `{ sandbox: "off" }` on a machine without a working bubblewrap when it is not required,
 * so `pnpm test` on a fresh machine still runs them. Spread it into a ShellPolicyConfig.
 */
export function shellForTests(env: NodeJS.ProcessEnv = process.env): { sandbox?: "off" } {
  if (partStatus("bwrap").available || systemTestsRequired(env)) return {};
  return { sandbox: "off" };
}
