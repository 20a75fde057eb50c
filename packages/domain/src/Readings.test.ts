import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { AGREEMENT_MAX_DISTINCT, agreedReadings, type Reading } from "./Readings.ts"

const readings = (values: ReadonlyArray<string>): Array<Reading> =>
  values.map((value, i) => ({ key: `doc-${i}`, value }))

const agreed = (values: ReadonlyArray<string>) =>
  Object.fromEntries([...agreedReadings(readings(values))].map(([k, v]) => [k, v.value]))

const ADDRESS = "Lot 3, Jalan Pelabur 23/1, 40300 Shah Alam, Selangor."

describe("agreedReadings", () => {
  it("gives each misread reading the value its document's twins agree on", () => {
    const values = [
      ADDRESS,
      "Lot 3, Jalan Pelabar 23/1, 40300 Shah Alam, Selangor.",
      ADDRESS,
      "lot 5, Jalan Pelabur 23:1, 40300 Shah Alam, Selangor.",
      "Lot 3, Jalan Pelabur 23/1, 40300 Shah Alain, Selangor.",
    ]
    // `lot 5 … 23:1` has other numbers: it may be another shop's, and stays as read.
    expect(agreed(values)).toEqual({ "doc-1": ADDRESS, "doc-4": ADDRESS })
    expect(agreedReadings(readings(values)).get("doc-1")?.readings).toBe(4)
  })

  it("takes the reading nearest to all of them even when no two documents read it alike", () => {
    // Each reading has one error of its own; the one nearest to all is the one without.
    const values = [
      "12, Jalan Tampoi 7/4, Kawasan Perindustrian Tampoi",
      "12, Jalan Tampoi 7/4, Kawasan Perindustrian Tampol",
      "12, Jalan Tampci 7/4, Kawasan Perindustrian Tampoi",
      "12, Jalan Tampoi 7/4, Kawasan Perindustrlan Tampoi",
    ]
    expect(agreed(values)).toEqual({ "doc-1": values[0], "doc-2": values[0], "doc-3": values[0] })
  })

  it("leaves values as read with fewer than three readings, or when they differ by more than a few characters", () => {
    expect(agreed([ADDRESS, "Lot 3, Jalan Pelabar 23/1, 40300 Shah Alam, Selangor."])).toEqual({})
    // Two branches of one shop: their addresses differ by far more than a tenth of their characters.
    expect(
      agreed([
        "No. 76, Jalan SS15/4B, 47500 Subang Jaya, Selangor",
        "No. 76, Jalan SS15/4B, 47500 Subang Jaya, Selangor",
        "B-8, Jalan SS21/39, 47400 Petaling Jaya, Selangor",
      ]),
    ).toEqual({})
  })

  it("never holds readings with other numbers against each other: they tell places apart", () => {
    const lot = (n: number, street = "Pelabur") => `Lot ${n}, Jalan ${street} 23/1, 40300 Shah Alam`
    expect(agreed([lot(5), lot(5), lot(5), lot(6), lot(6), lot(6, "Pelabar")])).toEqual({ "doc-5": lot(6) })
    expect(agreed([lot(5), lot(5), lot(5), lot(6)])).toEqual({})
  })

  it("never changes short values, whose one character is the whole difference", () => {
    expect(agreed(["INV-2024-0101", "INV-2024-0102", "INV-2024-0101", "INV-2024-0101"])).toEqual({})
  })

  it("leaves readings without numbers as read: two names may be a letter apart", () => {
    expect(
      agreed([
        "KEDAI RUNCIT GIN KEE SDN BHD",
        "KEDAI RUNCIT GIN KEE SDN BHD",
        "KEDAI RUNCIT KIN KEE SDN BHD",
      ]),
    ).toEqual({})
  })

  it("ignores case and spacing in comparing, and gives the agreed value as one document read it", () => {
    const values = [
      "KAWASAN PERINDUSTRIAN BALAKONG, 43300 SERI KEMBANGAN",
      "Kawasan  Perindustrian Balakong, 43300 Seri Kembangan",
      "KAWASAN PERINDUSTRIAN BALALUNG, 43300 SERI KEMBANGAN",
    ]
    expect(agreed(values)).toEqual({ "doc-2": values[0] })
  })

  it("does not carry a value along a chain of small steps to a reading far from it", () => {
    // Each reading is two characters from the next, the ends eight apart: only those near the middle agree.
    const base = "Bangunan Wisma Cosway 2, Jalan Raja Chulan, 50200 Kuala Lumpur"
    const values = [
      base,
      base,
      base,
      base.replace("Wisma", "Wiswa").replace("Raja", "Rajs"),
      base
        .replace("Wisma", "Wiswa")
        .replace("Raja", "Rajs")
        .replace("Chulan", "Chutan")
        .replace("Kuala", "Kusla"),
      base
        .replace("Wisma", "Wiswa")
        .replace("Raja", "Rajs")
        .replace("Chulan", "Chutan")
        .replace("Kuala", "Kusla")
        .replace("Lumpur", "Lumpor")
        .replace("Bangunan", "Banguran")
        .replace("Cosway", "Cesway")
        .replace("Jalan", "Jalaa"),
    ]
    const result = agreed(values)
    expect(result["doc-3"]).toBe(base)
    expect(result["doc-5"]).toBeUndefined()
  })

  it("leaves a project of more distinct readings than it compares as read", () => {
    const many = Array.from({ length: AGREEMENT_MAX_DISTINCT + 1 }, (_, i) => `${ADDRESS} ${i}`)
    expect(agreedReadings(readings(many)).size).toBe(0)
  })

  it("only ever gives a value that one of the readings has, to readings within a tenth of its characters", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.constantFrom(ADDRESS, "Lot 3, Jalan Pelabar 23/1", "Lot 8, Jalan Pelabur 23/1, 40300 Shah"),
          {
            maxLength: 12,
          },
        ),
        (values) => {
          const result = agreedReadings(readings(values))
          for (const [key, { value, readings: n }] of result) {
            expect(values).toContain(value)
            expect(n).toBeGreaterThanOrEqual(3)
            expect(values[Number(key.slice(4))]).not.toBe(value)
          }
        },
      ),
    )
  })
})
