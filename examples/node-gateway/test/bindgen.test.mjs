// The patches bindgen.mjs applies to jco's bindings keep jco's behaviour: here, the ASCII fast
// path of the string lowering (`asciiLength`) writes the same bytes and reports the same length
// as jco's own loop, on the bindings the tests run against (generated/, jco from the lock file).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { asciiLength } from '../bindgen.mjs';

const glue = readFileSync(new URL('../generated/loopguard_policy.js', import.meta.url), 'utf8');

/** `_utf8AllocateAndEncode` from the bindings, over a fake guest memory with a bump allocator. */
function lowering(js) {
  const start = js.indexOf('function _utf8AllocateAndEncode(');
  const end = js.indexOf('\n  }\n', start);
  assert.ok(start >= 0 && end > start, 'the bindings have _utf8AllocateAndEncode');
  const consts = js.includes('const ASCII_ONLY') ? 'const ASCII_ONLY = /^[\\x00-\\x7f]*$/;' : '';
  const make = new Function(
    `const TEXT_ENCODER_UTF8 = new TextEncoder(); ${consts}\n${js.slice(start, end + 4)}\nreturn _utf8AllocateAndEncode;`,
  );
  const encode = make();
  return (s) => {
    const memory = { buffer: new ArrayBuffer(1 << 16) };
    let next = 8;
    const realloc = (_old, _oldSize, _align, size) => ((next += size), next - size);
    const { ptr, len } = encode(s, realloc, memory);
    return { len, bytes: [...new Uint8Array(memory.buffer, ptr, len)], allocated: next - 8 };
  };
}

test('the generated bindings carry the ASCII fast path', () => {
  assert.match(glue, /if \(ASCII_ONLY\.test\(s\)\)/);
  assert.match(glue, /const ASCII_ONLY = /);
});

test('the fast path lowers every string exactly as jco does', () => {
  const patched = lowering(glue);
  const reference = (s) => {
    const bytes = [...new TextEncoder().encode(s)];
    return { len: bytes.length, bytes, allocated: bytes.length };
  };
  const strings = [
    'x',
    '{"path":"/home/dev/a.rs","timeout_ms":120000}',
    '\u0000\u001f\u007f',
    'caf\u00e9',
    '\u00ff\u0080',
    '日本語',
    '😀 emoji',
    'lone \ud800 high',
    'lone \udc00 low',
    'a'.repeat(5000) + '\u0080',
  ];
  for (const s of strings) assert.deepEqual(patched(s), reference(s), JSON.stringify(s.slice(0, 40)));
  assert.deepEqual(patched(''), { len: 0, bytes: [], allocated: 0 });
});

test('bindings without jco 1.35 string loop are left as they are', () => {
  const other = 'function _utf8AllocateAndEncode(s, realloc, memory) { return encode(s); }';
  assert.deepEqual(asciiLength(other), { js: other, patched: false });
});
