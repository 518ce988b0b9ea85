// Boundary guards for the wasm-bindgen classes (RetryEngine, RetryCall, LedgerRules), installed in place on
// the generated prototypes, so that the raw methods a user can reach through the prototype chain are guarded
// too. Why: wasm-bindgen's glue passes `this.__wbg_ptr` to wasm unchecked. A freed object (pointer 0) makes
// wasm-bindgen throw a JS exception *through wasm frames*, which skips their epilogues (the shadow stack
// pointer is not restored; what the frames held leaks): after a few thousand such calls every call into the
// module traps, for the life of the page or isolate. A cloned or forged object hands wasm a pointer it never
// made. And number parameters are coerced (`null` → 0, `'0x10'` → 16, a `Date` → its time).
//
// So, before any call enters wasm:
// - `this` and every object argument must be a live object of the right class made by this module instance
//   (`TypeError` with `code: 'foreign_object'` or `'freed'`, and `field`); objects are known by identity in
//   a private WeakMap, registered when the glue stores their pointer (the prototype's `__wbg_ptr` accessor),
//   which it may only do right after a wasm constructor of that class returned (`__adopt`, src/wasm/brand.rs);
// - every number parameter must be a number (`TypeError` `invalid_type`);
// - `free()` of an object in use by one of its own calls (a getter freeing it) is refused (`in_use`), and
//   freeing twice is `freed`; the glue's `__destroy_into_raw`, `__wbg_ptr` stores and `__wrap` are internal.
//
// The Rust side never lets a JS exception unwind through wasm frames (src/wasm/mod.rs), but one case is out
// of its reach: a stack overflow *inside* a wasm call (a caller recursing to the brink, then calling in).
// As a backstop, every guarded call notes the wasm's shadow stack pointer (exported by
// scripts/export-stack-pointer.mjs) and puts it back if an exception escapes; and when no wasm frame can be
// live (no caller code is running inside the binding's reads: `state.depth === 0`), a stack pointer that is
// not at its resting value is put back there (an escape through an entry the guards do not wrap).
import { rangeError, typeError } from './errors.js';
import { state } from './wasm-active.js';

const AT_REST = -1; // enter()'s answer when no wasm frame is live: restore to the resting value

/** Argument kinds. */
export const ANY = 0;
export const NUMBER = 1;
export const U32 = 2;

const GUARDED = Symbol('mcp-retry-policy.guarded');

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
    /** Before a call; also repairs a leak from an unguarded entry, when at rest. */
    enter() {
      if (sp === undefined) init();
      if (state.depth !== 0) return sp.value; // nested inside a wasm call: restore exactly this
      const v = sp.value;
      if (rest === undefined) rest = v;
      else if (v !== rest) sp.value = rest; // leaked by an exception that escaped an unguarded entry
      return AT_REST;
    },
    /** `enter` for the hot path: reads the stack pointer only when nested. */
    enterFast() {
      if (state.depth !== 0 || rest === undefined) return this.enter();
      return AT_REST;
    },
    escaped(v) {
      const to = v === AT_REST ? rest : v;
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

function typeName(v) {
  if (v === null) return 'null';
  try {
    if (Array.isArray(v)) return 'array';
  } catch {
    return 'a revoked Proxy';
  }
  return typeof v;
}

/** A number parameter: refuses what wasm-bindgen's glue would coerce. */
export function checkNumber(v, field) {
  if (typeof v !== 'number') throw typeError(field, `${field} must be a number, got ${typeName(v)}`);
}

function checkU32(v, field) {
  checkNumber(v, field);
  if (v >>> 0 !== v) throw rangeError(field, `${field} must be a whole number from 0 to 2^32 - 1, got ${v}`);
}

/**
 * Guards `Class` (a wasm-bindgen class) in place. `methods` maps each method to its parameters as
 * `[name, kind]` pairs, kind being ANY, NUMBER, U32 or another guard (an object of that class); `getters`
 * lists the getters. Returns `{ live(obj, field), raw }`: `live` returns the object's record (throws the
 * typed error), `raw` holds the unguarded methods for callers that checked already.
 */
export function guardClass(Class, { name, tag, adopt, stack, methods = {}, getters = [] }) {
  const P = Class.prototype;
  if (Object.hasOwn(P, GUARDED)) return P[GUARDED];
  const records = new WeakMap(); // object → { ptr, busy }
  let internal = false; // the glue's own free path is running

  function live(obj, field) {
    const r = records.get(obj); // undefined for primitives, clones, fakes and foreign objects
    if (r === undefined) {
      throw typeError(field, `${field} is not a ${name} made by this module (got ${typeName(obj)}; a cloned, forged or foreign object cannot be used)`, 'foreign_object');
    }
    if (r.ptr === 0) throw typeError(field, `${field} is a ${name} that was freed`, 'freed');
    // The glue passes the object's own `__wbg_ptr` to wasm: it must still be the one wasm made.
    if (obj.__wbg_ptr !== r.ptr) throw typeError(field, `${field} is a ${name} whose internal pointer was overwritten`, 'foreign_object');
    return r;
  }

  // The first store of an object's pointer (the glue's, right after a wasm constructor) runs this setter:
  // it is accepted only with the constructor's token (src/wasm/brand.rs), registered in `records`, and kept
  // as an own data property (non-enumerable: a clone does not carry it; non-configurable: it cannot become
  // a getter that answers differently to the check and to the glue). Later stores by anyone but `free()`
  // are caught by `live()`, which compares it with the registered pointer.
  Object.defineProperty(P, '__wbg_ptr', {
    configurable: false,
    enumerable: false,
    get() {
      return 0;
    },
    set(ptr) {
      if (ptr === 0 || records.has(this) || !adopt(tag)) {
        throw typeError('this', `the pointer of a ${name} is internal to this module`, 'foreign_object');
      }
      records.set(this, { ptr, busy: 0 });
      Object.defineProperty(this, '__wbg_ptr', { value: ptr, writable: true, enumerable: false, configurable: false });
    },
  });

  const raw = {};
  const wrap = (key, fn, params) => {
    raw[key] = fn;
    const checks = params.map(([field, kind]) =>
      kind === ANY ? null : kind === NUMBER ? (v) => checkNumber(v, field) : kind === U32 ? (v) => checkU32(v, field) : (v) => kind.live(v, field));
    return {
      [key](...args) {
        const held = [live(this, 'this')];
        for (let i = 0; i < checks.length; i++) {
          const r = checks[i]?.(args[i]);
          if (r !== undefined) held.push(r);
        }
        for (const r of held) r.busy++;
        const sp = stack.enter();
        try {
          return fn.apply(this, args);
        } catch (e) {
          stack.escaped(sp);
          throw e;
        } finally {
          for (const r of held) r.busy--;
        }
      },
    }[key];
  };
  for (const [key, params] of Object.entries(methods)) {
    const d = Object.getOwnPropertyDescriptor(P, key);
    if (typeof d?.value !== 'function') throw new Error(`guard: ${name}.${key} is not a method of the generated class`);
    Object.defineProperty(P, key, { ...d, value: wrap(key, d.value, params) });
  }
  for (const key of getters) {
    const d = Object.getOwnPropertyDescriptor(P, key);
    if (typeof d?.get !== 'function') throw new Error(`guard: ${name}.${key} is not a getter of the generated class`);
    const get = d.get;
    raw[key] = get;
    Object.defineProperty(P, key, {
      ...d,
      get: {
        [key]() {
          live(this, 'this');
          return stack.call(get, this, []);
        },
      }[key],
    });
  }

  const rawFree = P.free;
  const rawDestroy = P.__destroy_into_raw;
  function free() {
    const r = live(this, 'this');
    if (r.busy > 0) throw typeError('this', `this ${name} is in use: it cannot be freed from inside one of its own calls`, 'in_use');
    internal = true;
    const sp = stack.enter();
    try {
      rawFree.call(this);
    } catch (e) {
      stack.escaped(sp);
      // Only if an earlier exception escaped a call on this object (a stack overflow inside it) does wasm
      // still count it borrowed and refuse; it is freed for JS all the same (its memory stays lost).
      if (this.__wbg_ptr !== 0) throw e;
    } finally {
      internal = false;
      r.ptr = 0;
    }
  }
  P.free = free;
  if (Symbol.dispose) P[Symbol.dispose] = free;
  P.__destroy_into_raw = function __destroy_into_raw() {
    if (!internal) throw typeError('this', `__destroy_into_raw is internal to this module: call free()`, 'internal');
    return rawDestroy.call(this);
  };

  // Every entry point of the generated class must be guarded: a method the binding gains later and this list
  // misses would reach wasm unchecked (a freed object → an exception through wasm frames). Fail at load.
  const known = new Set(['constructor', 'free', '__destroy_into_raw', '__wbg_ptr', ...Object.keys(methods), ...getters]);
  for (const key of Object.getOwnPropertyNames(P)) {
    if (!known.has(key)) throw new Error(`guard: ${name}.${key} is an entry point of the generated class without a guard`);
  }

  const guard = { live, raw, name, stack };
  Object.defineProperty(P, GUARDED, { value: guard });
  return guard;
}
