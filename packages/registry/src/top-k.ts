/**
 * The best `k` of `n` items, best first, without sorting all `n`: a binary heap of size k
 * whose root is the worst item kept, so each further item costs one comparison when it does
 * not make the cut and O(log k) when it does. `before(a, b)` must be a strict total order
 * (ties broken, e.g. by name) so the answer is the same whatever order items come in.
 */
export function topIndices(n: number, k: number, before: (a: number, b: number) => boolean): number[] {
  const size = Math.min(Math.max(0, Math.floor(k)), n);
  if (size === 0) return [];
  const heap: number[] = [];
  const siftUp = (i: number): void => {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      // The root holds the worst: a parent ranked before its child is out of place.
      if (!before(heap[parent]!, heap[i]!)) return;
      [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
      i = parent;
    }
  };
  const siftDown = (i: number): void => {
    for (;;) {
      let worst = i;
      const l = 2 * i + 1;
      const r = l + 1;
      if (l < heap.length && before(heap[worst]!, heap[l]!)) worst = l;
      if (r < heap.length && before(heap[worst]!, heap[r]!)) worst = r;
      if (worst === i) return;
      [heap[worst], heap[i]] = [heap[i]!, heap[worst]!];
      i = worst;
    }
  };
  for (let i = 0; i < n; i++) {
    if (heap.length < size) {
      heap.push(i);
      siftUp(heap.length - 1);
    } else if (before(i, heap[0]!)) {
      heap[0] = i;
      siftDown(0);
    }
  }
  return heap.sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
}
