import type { ToolContent } from "@capgate/tools";

/** A content block as the trace keeps it: binary payloads replaced by the file they were saved to. */
export type TracedContent =
  | Exclude<ToolContent, { type: "image" | "audio" } | { type: "resource" }>
  | (Omit<Extract<ToolContent, { type: "image" | "audio" }>, "data"> & TracedFile)
  | (Omit<Extract<ToolContent, { type: "resource" }>, "resource"> & {
      resource: Omit<Extract<ToolContent, { type: "resource" }>["resource"], "blob"> & Partial<TracedFile>;
    });

/** Where a binary payload went: a path relative to the state dir, and its decoded size. */
export interface TracedFile {
  file: string;
  bytes: number;
}

/** An image a provider that reads images may be shown, base64. */
export interface StepImage {
  data: string;
  mimeType: string;
}

/** Saves one binary payload under the run's directory; returns the path relative to the state dir. */
export type AttachmentWriter = (name: string, bytes: Uint8Array) => string;

const EXTENSIONS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/svg+xml": "svg",
  "audio/wav": "wav",
  "audio/x-wav": "wav",
  "audio/mpeg": "mp3",
  "audio/ogg": "ogg",
  "application/pdf": "pdf",
  "application/json": "json",
  "text/plain": "txt",
};

/** Images up to this size (base64 characters, all images of one step together) go to the model as image parts. */
export const MAX_MODEL_IMAGE_CHARS = 8 * 1024 * 1024;

function extensionOf(mimeType: string | undefined): string {
  return (mimeType && EXTENSIONS[mimeType.toLowerCase()]) || "bin";
}

/**
 * Externalise one result's content for the trace and describe it for the model: every
 * image, audio and blob payload is written to a file (`<step>-<n>.<ext>` under the run's
 * directory) and replaced in the trace by `{ file, bytes }`, so a trace line never carries
 * megabytes; the returned text lines say what each non-text block is and where it went
 * (`[image image/png 4033 bytes: saved as runs/<id>/3-1.png]`), resource links with their
 * uri and name. Images are also returned for providers that read them.
 */
export function externaliseContent(
  content: readonly ToolContent[],
  step: number,
  write: AttachmentWriter | undefined,
): { traced: TracedContent[]; lines: string[]; images: StepImage[] } {
  const traced: TracedContent[] = [];
  const lines: string[] = [];
  const images: StepImage[] = [];
  let n = 0;
  let imageChars = 0;
  const save = (base64: string, mimeType: string | undefined): TracedFile & { saved?: string } => {
    const bytes = Buffer.from(base64, "base64");
    n++;
    if (!write) return { file: "", bytes: bytes.length };
    try {
      const file = write(`${step}-${n}.${extensionOf(mimeType)}`, bytes);
      return { file, bytes: bytes.length, saved: file };
    } catch {
      return { file: "", bytes: bytes.length };
    }
  };
  const where = (f: { saved?: string }) => (f.saved ? `: saved as ${f.saved}` : ": not saved");
  for (const block of content) {
    switch (block.type) {
      case "text":
        traced.push(block);
        break;
      case "image":
      case "audio": {
        const { data, ...rest } = block;
        const f = save(data, block.mimeType);
        traced.push({ ...rest, file: f.file, bytes: f.bytes });
        lines.push(`[${block.type} ${block.mimeType} ${f.bytes} bytes${where(f)}]`);
        if (block.type === "image" && imageChars + data.length <= MAX_MODEL_IMAGE_CHARS) {
          imageChars += data.length;
          images.push({ data, mimeType: block.mimeType });
        }
        break;
      }
      case "resource_link":
        traced.push(block);
        lines.push(
          `[resource link ${block.uri} name=${JSON.stringify(block.name)}${block.mimeType ? ` ${block.mimeType}` : ""}${block.description ? `: ${block.description}` : ""}]`,
        );
        break;
      case "resource": {
        const { blob, ...resource } = block.resource;
        if (typeof blob === "string") {
          const f = save(blob, resource.mimeType);
          traced.push({ ...block, resource: { ...resource, file: f.file, bytes: f.bytes } });
          lines.push(
            `[resource ${resource.uri}${resource.mimeType ? ` ${resource.mimeType}` : ""} ${f.bytes} bytes${where(f)}]`,
          );
        } else {
          traced.push(block);
          lines.push(
            `[resource ${resource.uri}${resource.mimeType ? ` ${resource.mimeType}` : ""}, text inline]`,
          );
        }
        break;
      }
      default:
        traced.push(block);
    }
  }
  return { traced, lines, images };
}

/** structuredContent as one compact JSON line for the model, cut to `max` characters. */
export function structuredLine(value: unknown, max: number): string | undefined {
  if (value === undefined) return undefined;
  const text = JSON.stringify(value);
  if (text === undefined) return undefined;
  return text.length <= max ? `structuredContent: ${text}` : `structuredContent: ${text.slice(0, max)}…[cut]`;
}
