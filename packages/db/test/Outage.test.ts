import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { outageOf, StorageUnavailable } from "../src/Outage.ts"

const socketError = (code: string, syscall: string) =>
  Object.assign(new Error(`${syscall} ${code} 127.0.0.1:5432`), { code, syscall })

describe("outageOf", () => {
  it("tells storage and database outages from every other failure", () => {
    const storage = new StorageUnavailable({ operation: "S3 GetObject", key: "a/b", reason: "timeout" })
    expect(outageOf(storage)?.part).toBe("storage")
    expect(outageOf(new Error("wrapped", { cause: storage }))?.part).toBe("storage")
    // pg: its socket's error as it is, a server shutting down, a connection lost.
    expect(outageOf(socketError("ECONNREFUSED", "connect"))?.part).toBe("database")
    expect(outageOf(Object.assign(new Error("terminating connection"), { code: "57P01" }))?.part).toBe(
      "database",
    )
    expect(outageOf(new Error("Connection terminated unexpectedly"))?.part).toBe("database")
    expect(outageOf(socketError("ENOENT", "connect"))?.part).toBe("database")
    // Not outages: a file that is not there, a failure of another client (fetch's cause), a plain error.
    expect(outageOf(socketError("ENOENT", "open"))).toBeUndefined()
    expect(
      outageOf(new TypeError("fetch failed", { cause: socketError("ECONNREFUSED", "connect") })),
    ).toBeUndefined()
    expect(outageOf(new Error("unreadable PDF"))).toBeUndefined()
    expect(outageOf(Object.assign(new Error("duplicate key"), { code: "23505" }))).toBeUndefined()
  })

  it("finds an outage inside an Effect failure (a defect of Effect.runPromise)", async () => {
    const storage = new StorageUnavailable({ operation: "S3 PutObject", key: "k", reason: "refused" })
    const rejected = await Effect.runPromise(Effect.die(storage)).catch((e: unknown) => e)
    expect(outageOf(rejected)?.part).toBe("storage")
    const other = await Effect.runPromise(Effect.die(new Error("boom"))).catch((e: unknown) => e)
    expect(outageOf(other)).toBeUndefined()
  })
})
