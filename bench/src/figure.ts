/** One measured number. `target` is shown next to it, e.g. "≤ 0.15". */
export interface Figure {
  key: string;
  value: number;
  target?: string;
}

/** What every file in src/benches/ exports. */
export interface BenchModule {
  name: string;
  run(): Promise<Figure[]>;
}
