// A Map that forgets its oldest entries beyond a capacity: the plugin's bookkeeping (pending
// calls, notes, run ids) grows with traffic and must stay bounded in a gateway that runs for months.
export class BoundedMap extends Map {
  constructor(capacity) {
    super();
    this.capacity = capacity;
  }

  set(key, value) {
    if (super.has(key)) super.delete(key); // refresh: most recent last
    super.set(key, value);
    while (this.size > this.capacity) super.delete(super.keys().next().value);
    return this;
  }

  /** get and remove */
  take(key) {
    const v = super.get(key);
    if (v !== undefined) super.delete(key);
    return v;
  }
}
