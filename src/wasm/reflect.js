// Catching reads for the wasm binding (src/wasm/read.rs), imported by the generated glue as a snippet; the
// package's JS guards (pkg-template/guard.js) import `active` from it too (through pkg/wasm-active.js,
// written by scripts/build.sh).
//
// Not wasm-bindgen's own `catch` imports (`js_sys::Reflect::get`/`ownKeys`): when one of those catches, the
// generated Rust never takes ownership of the import's return slot in the externref table, so every
// caught exception leaks a table slot (wasm-bindgen 0.2.130; a caller whose getters throw grew the table and
// the wasm memory without bound: 34 MB after 3 million reads). These never throw and return a status; the
// value, or what was thrown, is handed over by `taken()` right after (no other JS runs in between).
//
// They are also the only way the binding runs a caller's code (getters, proxy traps): so while none of them
// is running, no wasm frame is live, and the guards may check that the shadow stack is at rest.
let held;

/** `depth`: how many of these are running; when 0, no caller code runs inside a wasm call right now. */
export const state = { depth: 0 };

/** Runs `read` and keeps its value (true) or what it threw (false) for `taken()`; never throws. */
function attempt(read, object, key) {
  state.depth++;
  try {
    held = read(object, key);
    return true;
  } catch (e) {
    held = e;
    return false;
  } finally {
    state.depth--;
  }
}

export const get = (object, key) => attempt(Reflect.get, object, key);
export const ownKeys = (object) => attempt(Reflect.ownKeys, object);

export function taken() {
  const v = held;
  held = undefined;
  return v;
}
