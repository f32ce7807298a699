// Shared by the red-team replay tests (not exported): a place to run an attack for real
// under bash, outside the policy, to show it has its effect — or the test proves nothing.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { EFFECT_NAMES, type RedTeamAttack } from "./shell-red-team-3.js";

/** The system directories on a replay's PATH (git-core follows them, so `git-push` resolves). */
export const SYSTEM_DIRS = ["/usr/bin", "/bin", "/usr/sbin", "/sbin"];

/** Whether `program` is in one of the replay's system directories. */
export function installed(program: string): boolean {
  return SYSTEM_DIRS.some((d) => existsSync(join(d, program)));
}

/**
 * `describe` for a replay that needs `tools` (absolute paths) and git-core, else
 * `describe.skip`; with CAPGATE_REQUIRE_SYSTEM_TESTS set, a missing one is an error naming
 * `what` needs it, not a skip.
 */
export function describeReplay(
  tools: readonly string[],
  what: string,
): typeof describe | typeof describe.skip {
  const have = tools.every((p) => existsSync(p)) && existsSync("/usr/lib/git-core/git-push");
  if (process.env.CAPGATE_REQUIRE_SYSTEM_TESTS && !have)
    throw new Error(`${what} needs ${tools.join(", ")} and git-core`);
  return have ? describe : describe.skip;
}

/**
 * The attack really has its effect here (or the test proves nothing), unless it needs a
 * program this machine does not have: then only the verdict is checked.
 */
export function expectEffect(
  replay: AttackReplay,
  i: number,
  attack: RedTeamAttack & { needs?: string },
): void {
  if (attack.needs !== undefined && !installed(attack.needs)) return;
  expect(
    replay.hadEffect(i, attack),
    `${attack.command} must have its effect (${EFFECT_NAMES[attack.effect]})`,
  ).toBe(true);
}

export interface ReplayOptions {
  /**
   * HOME in a directory of its own, empty (a startup file then only runs when the command
   * line moves HOME); else HOME is the attack's working directory.
   */
  homeApart?: boolean;
}

/**
 * A temp root with a fake `xdg-open` first on PATH (it writes `ran` to $MARKER; $OPENER is
 * its path), one directory per attack, and the check of the attack's effect: the opener ran,
 * `victim` is gone, or `main` landed in `remote.git`. `open()` in beforeAll, `close()` after.
 */
export class AttackReplay {
  readonly #prefix: string;
  readonly #options: ReplayOptions;
  #root = "";
  #bin = "";

  constructor(prefix: string, options: ReplayOptions = {}) {
    this.#prefix = prefix;
    this.#options = options;
  }

  open(): void {
    this.#root = mkdtempSync(join(tmpdir(), this.#prefix));
    this.#bin = join(this.#root, "bin");
    mkdirSync(this.#bin);
    writeFileSync(join(this.#bin, "xdg-open"), '#!/bin/sh\necho ran >> "$MARKER"\ncat > /dev/null\n');
    chmodSync(join(this.#bin, "xdg-open"), 0o755);
  }

  close(): void {
    rmSync(this.#root, { recursive: true, force: true });
  }

  /** Run attack `i`'s setup and command under bash; whether the command had its effect. */
  hadEffect(i: number, attack: RedTeamAttack): boolean {
    const dir = join(this.#root, `case-${i}`);
    mkdirSync(dir);
    let home = dir;
    if (this.#options.homeApart) {
      home = join(this.#root, `home-${i}`);
      mkdirSync(home);
    }
    const marker = join(this.#root, `ran-${i}`);
    const env = {
      PATH: `${this.#bin}:${SYSTEM_DIRS.join(":")}:/usr/lib/git-core`,
      HOME: home,
      MARKER: marker,
      OPENER: join(this.#bin, "xdg-open"),
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_TERMINAL_PROMPT: "0",
      BROWSER: "xdg-open",
    };
    const run = (script: string) =>
      spawnSync("bash", ["--noprofile", "--norc", "-c", script], {
        cwd: dir,
        env,
        timeout: 20_000,
        stdio: ["ignore", "ignore", "pipe"],
        encoding: "utf8",
      });
    if (attack.setup !== "") {
      const s = run(attack.setup);
      expect(s.status, `setup of ${attack.command}: ${s.stderr}`).toBe(0);
    }
    run(attack.command);
    if (attack.effect === "opener") return existsSync(marker) && readFileSync(marker, "utf8").includes("ran");
    if (attack.effect === "delete") return !existsSync(join(dir, "victim"));
    const ref = spawnSync(
      "git",
      ["--git-dir", join(dir, "remote.git"), "rev-parse", "--verify", "-q", "main"],
      {
        env,
        encoding: "utf8",
      },
    );
    return ref.status === 0;
  }
}
