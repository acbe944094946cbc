// Vite's `?raw` imports (a file's text as a string), used by tests that check the docs against the code.
declare module "*?raw" {
  const text: string;
  export default text;
}
