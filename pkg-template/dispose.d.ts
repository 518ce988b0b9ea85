// `Symbol.dispose` for consumers whose TypeScript `lib` predates it (esnext.disposable): the same declaration
// TypeScript's lib makes, so the classes' `[Symbol.dispose]()` (and `using`) type-check under any `lib`.
export {};
declare global {
  interface SymbolConstructor {
    readonly dispose: unique symbol;
  }
}
