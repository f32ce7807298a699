/** A part of a listing: heading lines always shown, then items while the budget lasts. */
export interface ListingSection {
  /** Shown in full (each cut to `maxLine`), e.g. `fs — Files in the workspace.` */
  head: readonly string[];
  /** Shown in order, most relevant first, while they fit. */
  items: readonly string[];
  /** The line standing for the items left out: how many, and how to see them. */
  more: (omitted: number) => string;
}

export interface FittedListing {
  text: string;
  /** Items shown, over all sections. */
  shown: number;
  /** Items left out, over all sections. */
  omitted: number;
}

/** What a listing is cut to when even its headings do not fit. */
const CUT_MARK = "\n…[listing cut to fit]";

/** A line cut to `max` characters, never inside a surrogate pair. */
function cutLine(line: string, max: number): string {
  if (line.length <= max) return line;
  let end = max - 1;
  const code = line.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${line.slice(0, end)}…`;
}

/**
 * A listing of tools (signatures, descriptions) within `budget` characters, whatever the
 * number of items: every section's heading, then items taken round-robin — the first item
 * of each section, then the second, … — so each section shows its most relevant items;
 * a section with items left out ends with its `more` line (the count and how to see
 * them). Lines are cut to `maxLine` characters (default 400). The text never exceeds the
 * budget: past it (headings alone too long) it is cut with a marker.
 */
export function fitListing(
  sections: readonly ListingSection[],
  options: { budget: number; maxLine?: number },
): FittedListing {
  const budget = Math.max(CUT_MARK.length, Math.floor(options.budget));
  const maxLine = Math.max(20, options.maxLine ?? 400);
  const heads = sections.map((s) => s.head.map((line) => cutLine(line, maxLine)));
  const shown = sections.map(() => 0);
  const moreLength = (i: number, left: number) =>
    left > 0 ? cutLine((sections[i] as ListingSection).more(left), maxLine).length + 1 : 0;
  const reserve = sections.map((s, i) => moreLength(i, s.items.length));
  // Characters used, counting a newline after every line (the last one is dropped at the end).
  let used = heads.reduce((n, lines) => n + lines.reduce((m, l) => m + l.length + 1, 0), 0);
  let reserved = reserve.reduce((n, r) => n + r, 0);
  const open = sections.map((s) => s.items.length > 0);
  let progress = true;
  while (progress) {
    progress = false;
    sections.forEach((section, i) => {
      if (!open[i]) return;
      const n = shown[i] as number;
      const line = cutLine(section.items[n] as string, maxLine);
      const nextReserve = moreLength(i, section.items.length - n - 1);
      const after = used + line.length + 1 + (reserved - (reserve[i] as number) + nextReserve);
      if (after - 1 > budget) {
        open[i] = false;
        return;
      }
      used += line.length + 1;
      reserved += nextReserve - (reserve[i] as number);
      reserve[i] = nextReserve;
      shown[i] = n + 1;
      if (n + 1 >= section.items.length) open[i] = false;
      progress = true;
    });
  }
  const lines: string[] = [];
  let omitted = 0;
  sections.forEach((section, i) => {
    lines.push(...(heads[i] as string[]));
    const count = shown[i] as number;
    for (let k = 0; k < count; k++) lines.push(cutLine(section.items[k] as string, maxLine));
    const left = section.items.length - count;
    if (left > 0) lines.push(cutLine(section.more(left), maxLine));
    omitted += left;
  });
  let text = lines.join("\n");
  if (text.length > budget) text = `${cutLine(text, budget - CUT_MARK.length + 1).slice(0, -1)}${CUT_MARK}`;
  return { text, shown: shown.reduce((a, b) => a + b, 0), omitted };
}
