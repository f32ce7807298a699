import { CapgateError } from "@capgate/schema";

/** Errors of @capgate/postgres: codes `database_unreachable`, `database_rejected`, `schema_too_new`, `event_conflict`, `event_after_end`, `store_failed`, `invalid_request`. */
export class PostgresError extends CapgateError {}

/** Wrap a connection failure so the message names the setting that holds the URL (without its password). */
export function connectionError(error: unknown, setting: string, url: string): PostgresError {
  const e = error as { code?: string; message?: string };
  const where = redactUrl(url);
  const auth = e.code === "28P01" || e.code === "28000" || e.code === "3D000";
  return new PostgresError(
    auth ? "database_rejected" : "database_unreachable",
    auth
      ? `The database at ${where} (${setting}) refused the connection: ${e.message ?? String(error)}. Check the user, password and database name in ${setting}.`
      : `Cannot reach the database at ${where} (${setting}): ${e.message ?? e.code ?? String(error)}. Check ${setting} and that PostgreSQL is running.`,
    { property: setting, cause: error },
  );
}

/** A URL with its password replaced by `***`, fit for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(an invalid URL)";
  }
}
