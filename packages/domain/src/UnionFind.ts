/**
 * Disjoint sets over the indices 0…n-1 (union–find with path compression): which items a relation links,
 * directly or through others. Ruled lines that meet (PDF tables), table cells a missing rule joins, OCR
 * readings a few edits apart.
 */
export class UnionFind {
  private readonly parent: Int32Array
  constructor(n: number) {
    this.parent = Int32Array.from({ length: n }, (_, i) => i)
  }
  find(i: number): number {
    let r = i
    while (this.parent[r] !== r) r = this.parent[r]!
    let j = i
    while (this.parent[j] !== r) {
      const next = this.parent[j]!
      this.parent[j] = r
      j = next
    }
    return r
  }
  union(a: number, b: number) {
    const ra = this.find(a)
    const rb = this.find(b)
    if (ra !== rb) this.parent[rb] = ra
  }
}
