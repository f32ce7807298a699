import { randomBytes } from "node:crypto";

const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,79}$/;

/** A sortable, readable run id: `20261130-031502-k3x9q2`. */
export function newRunId(now = new Date()): string {
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  const stamp = `${now.getUTCFullYear()}${p(now.getUTCMonth() + 1)}${p(now.getUTCDate())}-${p(now.getUTCHours())}${p(now.getUTCMinutes())}${p(now.getUTCSeconds())}`;
  const rand = randomBytes(4)
    .toString("base64url")
    .replace(/[^A-Za-z0-9]/g, "x")
    .slice(0, 6)
    .toLowerCase();
  return `${stamp}-${rand}`;
}

export function isValidRunId(id: string): boolean {
  return RUN_ID.test(id);
}
