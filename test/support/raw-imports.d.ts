// Vite's `?raw` imports (a file's text as a string) and `import.meta.glob` (many files' texts at once), used by tests
// that check the docs and the layering against the code.
/// <reference types="vite/types/importMeta.d.ts" />
declare module "*?raw" {
  const text: string;
  export default text;
}
