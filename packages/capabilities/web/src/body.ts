/** What a response body is, for deciding how to show it. */
export type BodyKind = "html" | "json" | "text" | "binary";

export interface MediaType {
  /** Lower-case `type/subtype` without parameters; "" when the server sent none. */
  type: string;
  charset?: string;
}

const TEXT_TYPES = new Set([
  "application/javascript",
  "application/ecmascript",
  "application/x-javascript",
  "application/xml",
  "application/yaml",
  "application/x-yaml",
  "application/toml",
  "application/x-ndjson",
  "application/graphql",
  "application/sql",
  "application/x-sh",
  "application/csv",
  "application/x-www-form-urlencoded",
]);
const SNIFF_BYTES = 8192;

export function parseMediaType(header: string | undefined): MediaType {
  if (!header) return { type: "" };
  const [type = "", ...params] = header.split(";");
  const charset = params
    .map((p) => /^\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(p)?.[1])
    .find((c): c is string => c !== undefined);
  return { type: type.trim().toLowerCase(), ...(charset ? { charset: charset.toLowerCase() } : {}) };
}

/**
 * Decide how to treat a body: by its declared media type first; a missing or generic type
 * (`application/octet-stream`) is sniffed. Declared text that contains NUL bytes or is not
 * valid UTF-8 in a declared-UTF-8 body is treated as binary, so bytes are never dumped as text.
 */
export function classifyBody(bytes: Uint8Array, media: MediaType): BodyKind {
  const { type } = media;
  const head = bytes.subarray(0, SNIFF_BYTES);
  if (type === "text/html" || type === "application/xhtml+xml") return hasNul(head) ? "binary" : "html";
  if (type === "application/json" || type === "text/json" || type.endsWith("+json")) {
    return looksLikeText(head, media.charset) ? "json" : "binary";
  }
  if (type.startsWith("text/") || TEXT_TYPES.has(type) || type.endsWith("+xml")) {
    return looksLikeText(head, media.charset) ? "text" : "binary";
  }
  if (type === "" || type === "application/octet-stream" || type === "binary/octet-stream") {
    if (!looksLikeText(head, undefined)) return "binary";
    return /^\s*<(?:!doctype\s+html|html[\s>])/i.test(asciiPrefix(head, 512)) ? "html" : "text";
  }
  return "binary";
}

/** The charset to decode with: the header's, else (for HTML) a `<meta charset>` near the top, else UTF-8. */
export function charsetOf(bytes: Uint8Array, media: MediaType, kind: BodyKind): string {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return "utf-8";
  if (media.charset && isKnownCharset(media.charset)) return media.charset;
  if (kind === "html") {
    const head = asciiPrefix(bytes, 1024);
    const meta =
      /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(head)?.[1] ??
      /<meta[^>]+content\s*=\s*["'][^"']*charset=([\w.:-]+)/i.exec(head)?.[1];
    if (meta && isKnownCharset(meta)) return meta.toLowerCase();
  }
  return "utf-8";
}

export function decodeText(bytes: Uint8Array, charset: string): string {
  return new TextDecoder(charset).decode(bytes);
}

const MAGIC: Array<[string, (b: Uint8Array) => boolean]> = [
  ["PNG image", (b) => startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])],
  ["JPEG image", (b) => startsWith(b, [0xff, 0xd8, 0xff])],
  ["GIF image", (b) => ascii(b, 0, 4) === "GIF8"],
  ["WebP image", (b) => ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 12) === "WEBP"],
  ["PDF document", (b) => ascii(b, 0, 5) === "%PDF-"],
  [
    "ZIP archive (or a format built on it: docx, xlsx, jar, epub)",
    (b) => startsWith(b, [0x50, 0x4b, 0x03, 0x04]),
  ],
  ["gzip archive", (b) => startsWith(b, [0x1f, 0x8b])],
  ["WebAssembly module", (b) => startsWith(b, [0x00, 0x61, 0x73, 0x6d])],
  ["ELF executable", (b) => startsWith(b, [0x7f, 0x45, 0x4c, 0x46])],
  ["MP4/QuickTime media", (b) => ascii(b, 4, 8) === "ftyp"],
  ["Ogg media", (b) => ascii(b, 0, 4) === "OggS"],
  ["MP3 audio", (b) => ascii(b, 0, 3) === "ID3"],
];

/** One line describing binary content instead of showing it: what it looks like, how big, image size when cheap to read. */
export function describeBinary(bytes: Uint8Array, media: MediaType): string {
  const kind = MAGIC.find(([, test]) => test(bytes))?.[0];
  const dims = imageSize(bytes);
  const what = kind ?? (media.type ? `${media.type} data` : "unrecognised binary data");
  return `${what}${dims ? `, ${dims.width}×${dims.height} px` : ""}`;
}

export function imageSize(bytes: Uint8Array): { width: number; height: number } | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length >= 24 && startsWith(bytes, [0x89, 0x50, 0x4e, 0x47]) && ascii(bytes, 12, 16) === "IHDR") {
    return { width: view.getUint32(16), height: view.getUint32(20) };
  }
  if (bytes.length >= 10 && ascii(bytes, 0, 4) === "GIF8") {
    return { width: view.getUint16(6, true), height: view.getUint16(8, true) };
  }
  return undefined;
}

function looksLikeText(head: Uint8Array, charset: string | undefined): boolean {
  // UTF-16 text is full of NUL bytes; any other declared charset is trusted unless NULs say otherwise.
  if (charset?.startsWith("utf-16") && isKnownCharset(charset)) return true;
  if (hasNul(head)) return false;
  if (charset && charset !== "utf-8" && charset !== "utf8" && isKnownCharset(charset)) return true;
  try {
    // stream: a multi-byte character cut at the sniff boundary is not an error.
    new TextDecoder("utf-8", { fatal: true }).decode(head, { stream: true });
    return true;
  } catch {
    return false;
  }
}

function hasNul(bytes: Uint8Array): boolean {
  return bytes.includes(0);
}

function isKnownCharset(label: string): boolean {
  try {
    new TextDecoder(label);
    return true;
  } catch {
    return false;
  }
}

function startsWith(bytes: Uint8Array, prefix: number[]): boolean {
  return prefix.every((b, i) => bytes[i] === b);
}

function ascii(bytes: Uint8Array, from: number, to: number): string {
  return String.fromCharCode(...bytes.subarray(from, to));
}

function asciiPrefix(bytes: Uint8Array, length: number): string {
  return new TextDecoder("latin1").decode(bytes.subarray(0, length));
}
