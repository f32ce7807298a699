/**
 * A script's wall-clock deadline that stops while a person is asked to approve one of its
 * calls (pauses nest; the clock runs again with what was left once the last one ends).
 */
export class Deadline {
  #leftMs: number;
  #since = Date.now();
  #pauses = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #expired = false;
  #stopped = false;

  constructor(
    readonly totalMs: number,
    private readonly onExpire: () => void,
  ) {
    this.#leftMs = totalMs;
    this.#arm();
  }

  /** True once the time is up. */
  get expired(): boolean {
    if (this.#expired) return true;
    if (this.#pauses > 0 || this.#stopped) return false;
    return this.expiredAt(Date.now());
  }

  /** `expired` with the time read by the caller (the engine's interrupt check reads it once for both clocks). */
  expiredAt(now: number): boolean {
    if (this.#expired) return true;
    if (this.#pauses > 0 || this.#stopped) return false;
    if (now - this.#since >= this.#leftMs) this.#expire();
    return this.#expired;
  }

  pause(): () => void {
    if (this.#expired || this.#stopped) return () => undefined;
    if (this.#pauses++ === 0) {
      this.#leftMs = Math.max(0, this.#leftMs - (Date.now() - this.#since));
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    let resumed = false;
    return () => {
      if (resumed) return;
      resumed = true;
      if (--this.#pauses === 0 && !this.#expired && !this.#stopped) {
        this.#since = Date.now();
        this.#arm();
      }
    };
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(): void {
    this.#timer = setTimeout(() => this.#expire(), this.#leftMs);
  }

  #expire(): void {
    if (this.#expired || this.#stopped) return;
    this.#expired = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.onExpire();
  }
}

/**
 * The time the engine spends running a script (compiling it, running its code and its
 * promise jobs), which counts against the script's deadline whether or not a pause is
 * active: a pause excuses only the time the script sits idle waiting for a person. While
 * the engine runs, the host's event loop is blocked — no timer fires and no answer is
 * processed — so the engine's interrupt check is the only thing that can stop it.
 */
export class EngineTime {
  #usedMs = 0;
  /** When the outermost engine entry now running began (undefined while the engine is idle). */
  #since: number | undefined;
  #depth = 0;

  constructor(readonly totalMs: number) {}

  /** Run `work` (one entry into the engine) and count its time. */
  run<T>(work: () => T): T {
    if (this.#depth++ === 0) this.#since = Date.now();
    try {
      return work();
    } finally {
      if (--this.#depth === 0) {
        this.#usedMs += Date.now() - (this.#since ?? Date.now());
        this.#since = undefined;
      }
    }
  }

  /** True once the engine's time, the entry now running included, reaches the total (`now` from Date.now()). */
  spentAt(now: number): boolean {
    return this.#usedMs + (this.#since === undefined ? 0 : now - this.#since) >= this.totalMs;
  }
}
