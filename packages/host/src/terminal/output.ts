/**
 * An EPIPE-safe line writer over a process stream. When the reader goes away
 * (`capgate capabilities | head -1`), Node emits `error` (EPIPE) on the stream, which
 * would crash the process as an unhandled 'error' event. Here it marks the output closed,
 * drops later writes and aborts `closed`, so a running command can stop quietly, clean
 * up its temp dirs and exit 0.
 */
export interface Output {
  line: (text: string) => void;
  readonly closed: AbortSignal;
}

export function createOutput(stream: NodeJS.WritableStream): Output {
  const controller = new AbortController();
  const close = () => {
    if (!controller.signal.aborted) controller.abort(new Error("the output pipe was closed"));
  };
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE" || error.code === "ERR_STREAM_DESTROYED") close();
    else throw error;
  });
  return {
    closed: controller.signal,
    line: (text) => {
      if (controller.signal.aborted) return;
      try {
        stream.write(text.endsWith("\n") ? text : `${text}\n`);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "EPIPE") close();
        else throw error;
      }
    },
  };
}
