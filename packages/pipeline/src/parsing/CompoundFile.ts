/**
 * A structural check of a compound file ([MS-CFB], the container of Outlook .msg files) before
 * @kenjiuno/msgreader reads it. The library trusts the file: it follows sector chains until they end
 * (a chain that loops never ends), walks the directory tree without noticing cycles, and allocates each
 * stream at the size the file claims (gigabytes for a 10 KB file). The parse thread's time and heap limits
 * would stop such a file, but only after a long wait and with a vague reason, and a stream buffer is
 * outside the heap limit. So the structures the library will walk are walked here first, bounded, the
 * way it walks them, and anything it could not survive is a ParseFailure saying what is wrong.
 * We keep this check ourselves because no maintained reader both bounds its work and reads MSG properties.
 */
import type { Effect } from "effect"
import { fromKernel, ParseFailure } from "./Backend.ts"

const END_OF_CHAIN = 0xfffffffe
const NO_STREAM = 0xffffffff
/** msgreader keeps streams below this size in the mini stream, whatever the header says. */
const MINI_STREAM_CUTOFF = 0x1000
const MINI_SECTOR = 64
const HEADER_DIFAT_ENTRIES = 109

const STORAGE = 1
const STREAM = 2
const ROOT = 5

export interface CompoundEntry {
  readonly index: number
  readonly name: string
  readonly type: number
  readonly size: number
  /** Storage nesting: 0 for the root's children. */
  readonly depth: number
  readonly parent: number
  /** Where the entry's 128 bytes are in the file. */
  readonly offset: number
}

export interface CompoundSummary {
  readonly entries: ReadonlyArray<CompoundEntry>
}

/**
 * Stops the check at the first fault: the only place the check raises an exception. The walk finds
 * faults deep inside nested closures (a sector read inside a chain inside the tree), where returning a
 * value through every frame would bury the walk; `checkCompoundFile` (its Effect boundary, `fromKernel`)
 * turns the raised ParseFailure back into its failure.
 */
const raise = (failure: ParseFailure): never => {
  throw failure
}

const damaged = (what: string): never =>
  raise(new ParseFailure({ reason: `the Outlook message is damaged: ${what}` }))

interface CheckOptions {
  readonly maxStorageDepth: number
  readonly tooDeep: () => ParseFailure
}

/**
 * Checks the compound file; its directory (the entries reachable from the root) when the library can
 * read it safely, else a ParseFailure saying what is wrong. Entries nested deeper than `maxStorageDepth`
 * storages (the root's children are at depth 0) make it fail with `tooDeep()`.
 */
export const checkCompoundFile = (
  bytes: Uint8Array,
  options: CheckOptions,
): Effect.Effect<CompoundSummary, ParseFailure> => fromKernel(() => walk(bytes, options))

interface Sectors {
  /** The little-endian 32-bit number at a byte offset of the file (a fault when past its end). */
  readonly u32: (offset: number) => number
  readonly sectorCount: number
  /** 32-bit entries per sector. */
  readonly perSector: number
  readonly validSector: (id: number) => boolean
  readonly sectorOffset: (id: number) => number
}

/** The sectors of the FAT: listed in the header, then in a chain of DIFAT sectors. */
const fatSectorsOf = ({ u32, sectorCount, perSector, validSector, sectorOffset }: Sectors): Array<number> => {
  const fatSectorCount = u32(44)
  if (fatSectorCount > sectorCount) damaged("its allocation table is larger than the file")
  const fatSectors: Array<number> = []
  for (let i = 0; i < Math.min(fatSectorCount, HEADER_DIFAT_ENTRIES); i++) fatSectors.push(u32(76 + 4 * i))
  const difatCount = u32(72)
  if (difatCount > sectorCount) damaged("its allocation table is larger than the file")
  let remaining = fatSectorCount - fatSectors.length
  let difat = u32(68)
  const seenDifat = new Set<number>()
  for (let i = 0; i < difatCount; i++) {
    if (!validSector(difat) || seenDifat.has(difat)) damaged("its allocation table chain is broken")
    seenDifat.add(difat)
    const take = Math.min(remaining, perSector - 1)
    let j = 0
    for (; j < take; j++) {
      const id = u32(sectorOffset(difat) + 4 * j)
      if (id === NO_STREAM || id === END_OF_CHAIN) break
      fatSectors.push(id)
    }
    remaining -= take
    difat = u32(sectorOffset(difat) + 4 * (perSector - 1))
    if (difat === NO_STREAM || difat === END_OF_CHAIN) break
  }
  for (const id of fatSectors) if (!validSector(id)) damaged("its allocation table lies outside the file")
  return fatSectors
}

const walk = (bytes: Uint8Array, options: CheckOptions): CompoundSummary => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const length = bytes.byteLength
  if (length < 512) damaged(`the file is cut short (${length} bytes, less than a 512-byte header)`)
  const u32 = (offset: number): number => {
    if (offset < 0 || offset + 4 > length) damaged("the file is cut short")
    return view.getUint32(offset, true)
  }
  const shift = view.getUint16(30, true)
  if (shift !== 9 && shift !== 12) damaged(`its sector size (2^${shift}) is neither 512 nor 4096 bytes`)
  const sectorSize = 1 << shift
  const perSector = sectorSize / 4
  // A sector counts when at least its first byte is in the file: a cut last sector fails when read.
  const sectorCount = Math.max(0, Math.ceil((length - sectorSize) / sectorSize))
  const validSector = (id: number) => id < sectorCount
  const sectorOffset = (id: number) => (id + 1) * sectorSize

  const fatSectors = fatSectorsOf({ u32, sectorCount, perSector, validSector, sectorOffset })
  const fatEntries = fatSectors.length * perSector
  const nextSector = (id: number): number =>
    id < fatEntries
      ? u32(sectorOffset(fatSectors[Math.floor(id / perSector)]!) + 4 * (id % perSector))
      : END_OF_CHAIN

  /** The sectors of a chain, at most `limit` of them; each one in the file and none twice. */
  const chain = (
    start: number,
    next: (id: number) => number,
    valid: (id: number) => boolean,
    what: string,
    limit = Number.POSITIVE_INFINITY,
  ): Array<number> => {
    const out: Array<number> = []
    const seen = new Set<number>()
    for (let id = start; id !== END_OF_CHAIN && out.length < limit; id = next(id)) {
      if (!valid(id)) damaged(`${what} points outside the file`)
      if (seen.has(id)) damaged(`${what} loops`)
      seen.add(id)
      out.push(id)
    }
    return out
  }

  // The directory: 128-byte entries in a chain of sectors.
  const directorySectors = chain(u32(48), nextSector, validSector, "the directory")
  const entryAt = (index: number): number =>
    sectorOffset(directorySectors[Math.floor((index * 128) / sectorSize)]!) + ((index * 128) % sectorSize)
  const entryCount = (directorySectors.length * sectorSize) / 128
  if (entryCount === 0) damaged("it has no directory")
  const type = (index: number) => bytes[entryAt(index) + 66] ?? 0
  if (type(0) !== ROOT) damaged("its directory has no root entry")

  const nameOf = (index: number): string => {
    const at = entryAt(index)
    const size = Math.min(64, view.getUint16(at + 64, true))
    return Buffer.from(bytes.buffer, bytes.byteOffset + at, Math.max(0, size - 2))
      .toString("utf16le")
      .split("\0")[0]!
  }

  // The tree: each storage's children form a binary tree (left, right); every entry is reached once.
  const entries: Array<CompoundEntry> = []
  const visited = new Set<number>([0])
  const storages: Array<{ readonly index: number; readonly depth: number }> = [{ index: 0, depth: -1 }]
  while (storages.length > 0) {
    const storage = storages.pop()!
    const child = u32(entryAt(storage.index) + 76)
    const pending = child === NO_STREAM ? [] : [child]
    while (pending.length > 0) {
      const index = pending.pop()!
      if (index >= entryCount) damaged("its directory points outside itself")
      if (visited.has(index)) damaged("its directory loops")
      visited.add(index)
      const at = entryAt(index)
      const depth = storage.depth + 1
      if (depth > options.maxStorageDepth) raise(options.tooDeep())
      const entryType = type(index)
      entries.push({
        index,
        name: nameOf(index),
        type: entryType,
        size: u32(at + 120),
        depth,
        parent: storage.index,
        offset: at,
      })
      for (const sibling of [u32(at + 68), u32(at + 72)]) if (sibling !== NO_STREAM) pending.push(sibling)
      if (entryType === STORAGE) storages.push({ index, depth })
    }
  }

  // The mini stream (small streams, 64 bytes a sector) is the root's stream; its own FAT is a chain.
  const rootAt = entryAt(0)
  const miniStreamSectors = chain(u32(rootAt + 116), nextSector, validSector, "the small-stream area")
  const miniFatSectors: Array<number> = []
  const miniFatCount = u32(64)
  // As the library reads it: up to the header's count, stopping at sector 0 or the end of the chain.
  for (
    let id = u32(60), i = 0;
    i < miniFatCount && id !== 0 && id !== END_OF_CHAIN;
    i++, id = nextSector(id)
  ) {
    if (!validSector(id)) damaged("the small-stream table points outside the file")
    if (miniFatSectors.includes(id)) damaged("the small-stream table loops")
    if (miniFatSectors.length >= sectorCount) break
    miniFatSectors.push(id)
  }
  const miniEntries = miniFatSectors.length * perSector
  const miniSectorCount = Math.min(miniEntries, (miniStreamSectors.length * sectorSize) / MINI_SECTOR)
  const nextMini = (id: number): number =>
    id < miniEntries
      ? u32(sectorOffset(miniFatSectors[Math.floor(id / perSector)]!) + 4 * (id % perSector))
      : END_OF_CHAIN

  // Every stream: its size within the file, its chain long enough and sound; all of them fit in the file.
  let total = 0
  for (const entry of entries) {
    if (entry.type !== STREAM || entry.size === 0) continue
    if (entry.size > length)
      damaged(
        `the stream ${entry.name} claims ${entry.size} bytes, more than the whole file (${length} bytes)`,
      )
    total += entry.size
    if (total > length) damaged("its streams claim more bytes than the file holds")
    const start = u32(entryAt(entry.index) + 116)
    const small = entry.size < MINI_STREAM_CUTOFF
    const needed = Math.ceil(entry.size / (small ? MINI_SECTOR : sectorSize))
    const got = small
      ? chain(start, nextMini, (id) => id < miniSectorCount, `the stream ${entry.name}`, needed)
      : chain(start, nextSector, validSector, `the stream ${entry.name}`, needed)
    if (got.length < needed) damaged(`the stream ${entry.name} is cut short`)
  }
  return { entries }
}
