// Types of errors-doc.mjs, for its test.
import type { ProblemTableEntry } from '../packages/host/src/http/problem-codes.js';

export interface ErrorsDocSection {
  title: string;
  table: Record<string, ProblemTableEntry>;
}
export declare const repo: string;
export declare const DOC: string;
export declare const SECTIONS: { title: string; export: string }[];
export declare function rowName(entry: ProblemTableEntry): string;
export declare function renderErrorsDoc(sections: ErrorsDocSection[]): string;
