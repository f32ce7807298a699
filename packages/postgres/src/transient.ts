/** Errors after which the same statement may succeed later: the connection or the server went away, or the server is starting or stopping. */
export function isTransient(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  const code = e?.code ?? "";
  if (
    ["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "ENOTFOUND", "EHOSTUNREACH", "EAI_AGAIN"].includes(
      code,
    )
  )
    return true;
  // 08: connection exception; 57P01-03: admin shutdown, crash shutdown, cannot connect now; 53300: too many connections.
  if (code.startsWith("08") || code === "57P01" || code === "57P02" || code === "57P03" || code === "53300")
    return true;
  const message = e?.message ?? "";
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable/i.test(
    message,
  );
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
