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

  /** True once the time is up (read by the engine's interrupt check, so it must be cheap). */
  get expired(): boolean {
    if (this.#expired) return true;
    if (this.#pauses > 0 || this.#stopped) return false;
    if (Date.now() - this.#since >= this.#leftMs) this.#expire();
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
