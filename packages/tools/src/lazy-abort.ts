/**
 * An AbortController whose AbortSignal is made on first read of `signal`.
 *
 * In Node 20 an AbortSignal is an EventTarget that costs about 5 µs to make and more to
 * collect (measured: a no-op `POST /tools/call` spent a third of its time on two of them).
 * Most tool calls finish without anyone looking at their signal, so a call's abort state
 * lives here in two fields and becomes a real signal only when a handler, a policy or an
 * MCP call asks for one. A signal made after `abort()` starts aborted with the same
 * reason, so a reader cannot tell the difference; `onAbort` lets the executor follow an
 * abort without making the signal.
 */
export class LazyAbortController {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;
  #listeners: (() => void)[] | undefined;

  get aborted(): boolean {
    return this.#aborted;
  }

  /** Why it was aborted (undefined until then). */
  get reason(): unknown {
    return this.#reason;
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Abort once (later calls do nothing), like AbortController.abort. */
  abort(reason?: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason ?? new DOMException("This operation was aborted", "AbortError");
    this.#controller?.abort(this.#reason);
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners) for (const listener of listeners) listener();
  }

  /**
   * Call `listener` once when aborted (at once if it already is); returns a function that
   * removes it. Unlike a listener on `signal`, this does not make the signal.
   */
  onAbort(listener: () => void): () => void {
    if (this.#aborted) {
      listener();
      return noop;
    }
    this.#listeners ??= [];
    this.#listeners.push(listener);
    return () => {
      const i = this.#listeners?.indexOf(listener) ?? -1;
      if (i >= 0) this.#listeners?.splice(i, 1);
    };
  }
}

function noop(): void {}
