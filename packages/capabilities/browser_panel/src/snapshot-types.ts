/** One interactive element of the page, as a snapshot lists it. */
export interface PageElement {
  /** Stable within the document: `e12`. Accepted as a `target` by click and type. */
  ref: string;
  /** link, button, textbox, searchbox, checkbox, radio, combobox, listbox, slider, switch, tab, menuitem, option… */
  role: string;
  /** Visible text, label, aria-label, alt or title: what a person would call it. */
  name: string;
  tag: string;
  /** The `type` of an input. */
  type?: string;
  placeholder?: string;
  /** Current value of a field (passwords masked), or the selected option's text. */
  value?: string;
  href?: string;
  checked?: boolean;
  disabled?: boolean;
  /** Number of options of a select. */
  options?: number;
}

/** What the page itself reports: its text and its interactive elements. */
export interface PageSnapshot {
  title: string;
  url: string;
  /** Visible text (rendered, whitespace tidied), at most the requested length. */
  text: string;
  /** Length of the whole visible text before cutting. */
  textLength: number;
  elements: PageElement[];
  /** Interactive elements on the page, including those past the requested count. */
  elementCount: number;
}

/** What resolving a `target` found in the page. */
export type TargetMatch =
  | { found: PageElement; how: TargetStage }
  | { ambiguous: PageElement[]; how: TargetStage }
  | { none: true; staleRef?: boolean; suggestions: PageElement[] };

/** The order targets are tried in; the first stage with any match decides. */
export type TargetStage = "ref" | "exact name" | "css selector" | "partial name" | "exact text";
