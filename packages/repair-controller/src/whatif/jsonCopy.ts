/**
 * `JSON.parse(JSON.stringify(value))` without the text in between: a key whose value is `undefined`, a function or a
 * symbol is left out (in an array it is null), an object's `toJSON` is used (a Date is its ISO string), a number that
 * is not finite is null (-0 is 0), a bigint throws as JSON.stringify does. Strings are shared, not escaped and parsed
 * again: the replay's API server copies every request body (memoryApiServer.ts), and the controller's journal
 * ConfigMaps carry their records as JSON text, where a round trip through text costs a whole escape and parse per
 * write.
 */
export const jsonCopy = (value: unknown): unknown => copy(value, "")

const copy = (value: unknown, key: string): unknown => {
  const v =
    typeof value === "object" &&
    value !== null &&
    typeof (value as { toJSON?: unknown }).toJSON === "function"
      ? (value as { toJSON: (key: string) => unknown }).toJSON(key)
      : value
  switch (typeof v) {
    case "string":
    case "boolean":
      return v
    case "number":
      // -0 is written as 0.
      return Number.isFinite(v) ? v + 0 : null
    case "bigint":
      throw new TypeError("Do not know how to serialize a BigInt")
    case "object": {
      if (v === null) return null
      if (Array.isArray(v)) {
        const out: unknown[] = new Array(v.length)
        for (let i = 0; i < v.length; i++) out[i] = copy(v[i], String(i)) ?? null
        return out
      }
      const out: Record<string, unknown> = {}
      for (const k of Object.keys(v)) {
        const x = copy((v as Record<string, unknown>)[k], k)
        if (x === undefined) continue
        // JSON.parse makes "__proto__" an own key; an assignment would set the prototype.
        if (k === "__proto__")
          Object.defineProperty(out, k, { value: x, enumerable: true, writable: true, configurable: true })
        else out[k] = x
      }
      return out
    }
    default:
      return undefined
  }
}
