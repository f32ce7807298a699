/** JSON text with object keys sorted, so equal schemas give equal text whatever their key order. */
export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(",")}]`;
  const keys = Object.keys(value).sort();
  const parts: string[] = [];
  for (const key of keys) {
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined) continue;
    parts.push(`${JSON.stringify(key)}:${stableStringify(v)}`);
  }
  return `{${parts.join(",")}}`;
}

/**
 * A short, stable fingerprint of a JSON value (two independent 32-bit FNV-1a hashes of
 * its stable text). Pure JS so the package root stays runtime-neutral. For cache
 * identity where a collision would matter, compare `stableStringify` text instead.
 */
export function stableHash(value: unknown): string {
  const text = stableStringify(value);
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
  }
  return (h1 >>> 0).toString(16).padStart(8, "0") + (h2 >>> 0).toString(16).padStart(8, "0");
}

/**
 * What an approval binds to: the SHA-256 (lowercase hex) of the arguments' canonical JSON
 * (`stableStringify`: keys sorted, no whitespace), so the same call hashes the same
 * whatever the key order the model sent. WebCrypto keeps the package root runtime-neutral.
 */
export async function argumentsHash(value: unknown): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(stableStringify(value)),
  );
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}
