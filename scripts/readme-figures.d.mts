// Types of readme-figures.mjs, for its test.
export interface LoaderFigures {
  bytes: number;
  gzipBytes: number;
  minified: string;
  gzipped: string;
}
export declare const repo: string;
export declare const FIGURE_LINES: { file: string; pattern: RegExp; line: (f: LoaderFigures) => string }[];
export declare function measureLoader(): Promise<LoaderFigures>;
export declare function rewriteFigures(
  figures: LoaderFigures,
  read?: (file: string) => string,
): { file: string; before: string; after: string }[];
