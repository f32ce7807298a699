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
  /** [ms used by entries that ended, Date.now() when the entry now running began or 0]. */
  readonly #clock: Float64Array;
  #depth = 0;

  /**
   * `shared` (two numbers: ms used, start of the entry now running or 0) is where the host's
   * watchdog reads this clock when the engine runs on another thread: a native loop that
   * never reaches the interrupt check can then still be ended from outside.
   */
  constructor(
    readonly totalMs: number,
    shared?: Float64Array,
  ) {
    this.#clock = shared ?? new Float64Array(2);
    this.#clock.fill(0);
  }

  /** Run `work` (one entry into the engine) and count its time. */
  run<T>(work: () => T): T {
    if (this.#depth++ === 0) this.#clock[1] = Date.now();
    try {
      return work();
    } finally {
      if (--this.#depth === 0) {
        this.#clock[0] = (this.#clock[0] ?? 0) + Date.now() - (this.#clock[1] ?? 0);
        this.#clock[1] = 0;
      }
    }
  }

  /** True once the engine's time, the entry now running included, reaches the total (`now` from Date.now()). */
  spentAt(now: number): boolean {
    return sharedEngineTimeSpent(this.#clock, this.totalMs, now);
  }
}

/** Whether an EngineTime clock (possibly another thread's) has reached `totalMs` at `now`. */
export function sharedEngineTimeSpent(shared: Float64Array, totalMs: number, now: number): boolean {
  const used = shared[0] ?? 0;
  const since = shared[1] ?? 0;
  return used + (since === 0 ? 0 : now - since) >= totalMs;
}
