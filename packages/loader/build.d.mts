// Types of build.mjs, for the tests that build the bundle in memory.
export interface Bundle {
  code: string;
  map: string;
}
export declare const distDir: string;
export declare const exampleLibDir: string;
export declare function bundle(): Promise<{ iife: Bundle; esm: Bundle }>;
export declare function build(): Promise<{ iife: Bundle; esm: Bundle }>;
