// The shadow stack backstop for the server face's string-taking exports (`fingerprintJson`,
// `fingerprintCanonical`, `isValidOperationId`). The Rust side never lets a JS exception unwind through wasm
// frames (src/wasm/mod.rs): the rule exports take numbers only and import nothing, and the string exports run
// no caller code (a string primitive's length cannot throw). One case is out of its reach: a stack overflow
// *inside* a wasm call (a caller recursing to the brink, then calling in), or a tampered realm (the glue copies
// strings with `TextEncoder.prototype.encodeInto`). An exception that escapes skips the frames' epilogues: the
// shadow stack pointer is not restored, and after a few thousand such escapes every call into the module traps.
// So every guarded call notes the wasm's shadow stack pointer (exported by scripts/export-stack-pointer.mjs)
// and puts it back if an exception escapes; and since no wasm frame can be live when a call begins (no caller
// code ever runs inside one), a stack pointer not at its resting value is put back there first (an escape
// through an entry the guards do not wrap).

/**
 * One face's shadow stack backstop. `exports()` returns the wasm's exports (called on first use: the
 * module is initialized by then). `enter()` returns the value to restore if the call escapes;
 * `escaped(v)` restores it.
 */
export function stackGuard(exports) {
  let sp;
  let rest;
  const init = () => {
    sp = exports().__stack_pointer;
    if (!(sp instanceof WebAssembly.Global)) throw new Error('mcp-retry-policy: the wasm does not export __stack_pointer (build.sh)');
  };
  return {
    /** Before a call; also repairs a leak from an unguarded entry. */
    enter() {
      if (sp === undefined) init();
      const v = sp.value;
      if (rest === undefined) rest = v;
      else if (v !== rest) sp.value = rest; // leaked by an exception that escaped an unguarded entry
      return rest;
    },
    escaped(to) {
      if (sp !== undefined && to !== undefined && sp.value !== to) sp.value = to;
    },
    /** Calls `fn` with the backstop. */
    call(fn, self, args) {
      const v = this.enter();
      try {
        return fn.apply(self, args);
      } catch (e) {
        this.escaped(v);
        throw e;
      }
    },
  };
}

/** `fn` (a free function of the glue) with the backstop. */
export function guardFunction(stack, fn) {
  return {
    [fn.name](...args) {
      return stack.call(fn, undefined, args);
    },
  }[fn.name];
}
