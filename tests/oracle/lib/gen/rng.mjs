// The seeded random source of gen-trace.mjs: sfc32 seeded through splitmix32, plus the draws the
// episodes use (int, chance, pick, weighted, hex, word). Every choice in a trace comes from here, so
// a seed fixes the trace; there is no clock and no Math.random.

function splitmix32(a) {
  return () => {
    a |= 0;
    a = (a + 0x9e3779b9) | 0;
    let t = a ^ (a >>> 16);
    t = Math.imul(t, 0x21f0aaad);
    t ^= t >>> 15;
    t = Math.imul(t, 0x735a2d97);
    return (t ^ (t >>> 15)) >>> 0;
  };
}

export class Rng {
  constructor(seed) {
    const sm = splitmix32(seed >>> 0);
    this.a = sm();
    this.b = sm();
    this.c = sm();
    this.d = sm();
    for (let i = 0; i < 12; i++) this.u32();
  }
  u32() {
    let { a, b, c, d } = this;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    this.a = a;
    this.b = b;
    this.c = c;
    this.d = d;
    return t >>> 0;
  }
  float() {
    return this.u32() / 4294967296;
  }
  int(lo, hi) {
    return lo + Math.floor(this.float() * (hi - lo + 1));
  }
  chance(p) {
    return this.float() < p;
  }
  pick(arr) {
    return arr[Math.floor(this.float() * arr.length)];
  }
  weighted(pairs) {
    let total = 0;
    for (const [w] of pairs) total += w;
    let x = this.float() * total;
    for (const [w, v] of pairs) {
      x -= w;
      if (x < 0) return v;
    }
    return pairs[pairs.length - 1][1];
  }
  hex(n) {
    let s = "";
    for (let i = 0; i < n; i++) s += "0123456789abcdef"[this.int(0, 15)];
    return s;
  }
  word() {
    return this.pick(["alpha", "beta", "gamma", "delta", "omega", "kappa", "sigma", "zeta", "theta", "lambda"]);
  }
}
