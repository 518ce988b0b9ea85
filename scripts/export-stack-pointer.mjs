// Exports the wasm's shadow stack pointer (the mutable global LLVM names `__stack_pointer`) as
// `__stack_pointer`, so that the JS guards (pkg-template/guard.js) can restore it when a JS exception
// unwinds through wasm frames after all — a stack overflow inside a wasm call is one that no import can
// catch. Without the restore, each such unwind leaks the frames' shadow stack, and a few thousand of them
// make every later call trap. Runs on wasm-bindgen's output (which still has its name section), before
// wasm-opt strips names. Usage: node scripts/export-stack-pointer.mjs file.wasm
import { readFileSync, writeFileSync } from 'node:fs';

const EXPORT_NAME = '__stack_pointer';
const file = process.argv[2];
const bytes = readFileSync(file);

function leb(buf, pos) {
  let result = 0;
  let shift = 0;
  for (;;) {
    const b = buf[pos++];
    result += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (!(b & 0x80)) return [result, pos];
  }
}

function uleb(n) {
  const out = [];
  do {
    let b = n & 0x7f;
    n = Math.floor(n / 128);
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
}

const name = (buf, pos) => {
  const [len, p] = leb(buf, pos);
  return [buf.subarray(p, p + len).toString('utf8'), p + len];
};

if (bytes.readUInt32LE(0) !== 0x6d736100) throw new Error(`${file}: not a wasm module`);
const sections = [];
for (let pos = 8; pos < bytes.length; ) {
  const id = bytes[pos];
  const [size, start] = leb(bytes, pos + 1);
  sections.push({ id, at: pos, start, end: start + size });
  pos = start + size;
}

// The global's index, from the name section's global names (subsection 7).
const found = [];
for (const s of sections.filter((s) => s.id === 0)) {
  const [sectionName, p0] = name(bytes, s.start);
  if (sectionName !== 'name') continue;
  for (let p = p0; p < s.end; ) {
    const sub = bytes[p];
    const [size, start] = leb(bytes, p + 1);
    if (sub === 7) {
      let [count, q] = leb(bytes, start);
      for (; count > 0; count--) {
        let idx;
        [idx, q] = leb(bytes, q);
        let n;
        [n, q] = name(bytes, q);
        if (n === EXPORT_NAME) found.push(idx);
      }
    }
    p = start + size;
  }
}
if (found.length !== 1) throw new Error(`${file}: expected one global named ${EXPORT_NAME}, found ${found.length}`);

const exp = sections.filter((s) => s.id === 7);
if (exp.length !== 1) throw new Error(`${file}: expected one export section, found ${exp.length}`);
const [section] = exp;
let [count, p] = leb(bytes, section.start);
const entriesStart = p;
for (let i = 0; i < count; i++) {
  let n;
  [n, p] = name(bytes, p);
  if (n === EXPORT_NAME) throw new Error(`${file}: ${EXPORT_NAME} is exported already`);
  p = leb(bytes, p + 1)[1];
}
const nameBytes = Buffer.from(EXPORT_NAME, 'utf8');
const entry = Buffer.from([...uleb(nameBytes.length), ...nameBytes, 0x03 /* global */, ...uleb(found[0])]);
const body = Buffer.concat([Buffer.from(uleb(count + 1)), bytes.subarray(entriesStart, section.end), entry]);
const out = Buffer.concat([bytes.subarray(0, section.at), Buffer.from([7, ...uleb(body.length)]), body, bytes.subarray(section.end)]);
new WebAssembly.Module(out); // still valid
writeFileSync(file, out);
