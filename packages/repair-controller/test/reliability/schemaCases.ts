/**
 * Invalid config files generated from a config Schema (its encoded side: what a YAML file holds). For every
 * field: an unknown key next to it (a typo), a value of the wrong type, a bad enum value for a literal union, a
 * negative number where the schema wants >= 0 or > 0, and zero where it wants > 0. Each case is the smallest
 * file that reaches the field (required siblings filled with valid samples), with the field's path as the
 * binaries print it (`a.b[0].c`).
 */
import { SchemaAST } from "effect"

export type Path = ReadonlyArray<string | number>

export interface Case {
  readonly kind: "unknown key" | "wrong type" | "bad enum" | "negative" | "zero"
  readonly path: Path
  /** The file's content. */
  readonly config: unknown
  /** The same file with a valid value in place of the bad one (it must decode: the case tests one field). */
  readonly base: unknown
}

export const fieldName = (path: Path): string =>
  path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("")

/** Valid samples for required string fields and record keys, by field name (the schemas' own rules). */
export interface Samples {
  readonly strings: Readonly<Record<string, string>>
  /** The key used for a record at this path (dotted, without indexes); absent: `sample`. */
  readonly recordKeys: Readonly<Record<string, string>>
  /** Numbers where 1 breaks a rule across fields (a maximum below its default minimum). */
  readonly numbers?: Readonly<Record<string, number>>
}

const set = (root: unknown, path: Path, value: unknown): unknown => {
  if (path.length === 0) return value
  const [head, ...rest] = path
  if (typeof head === "number") {
    const arr = Array.isArray(root) ? [...root] : []
    arr[head] = set(arr[head], rest, value)
    return arr
  }
  const obj = typeof root === "object" && root !== null && !Array.isArray(root) ? { ...root } : {}
  ;(obj as Record<string, unknown>)[head as string] = set(
    (obj as Record<string, unknown>)[head as string],
    rest,
    value
  )
  return obj
}

const checksOf = (ast: SchemaAST.AST): string[] =>
  (ast.checks ?? []).map((c) =>
    String((c as { annotations?: { expected?: string } }).annotations?.expected ?? "")
  )

const isLiteralUnion = (ast: SchemaAST.AST): ast is SchemaAST.Union =>
  ast._tag === "Union" && ast.types.every((t) => t._tag === "Literal" || t._tag === "Undefined")

/** A valid value for `ast` (required fields only), or undefined when none can be made up. */
const sample = (ast: SchemaAST.AST, name: string, samples: Samples, recordPath: string): unknown => {
  switch (ast._tag) {
    case "Literal":
      return ast.literal
    case "Undefined":
      return undefined
    case "Union":
      for (const t of ast.types) {
        const v = sample(t, name, samples, recordPath)
        if (v !== undefined) return v
      }
      return undefined
    case "String":
      return samples.strings[name] ?? "sample"
    case "Number":
      return samples.numbers?.[name] ?? 1
    case "Boolean":
      return false
    case "Arrays": {
      const element = ast.rest[0]
      const one = element === undefined ? undefined : sample(element, name, samples, recordPath)
      return one === undefined ? [] : [one]
    }
    case "Objects": {
      let obj: Record<string, unknown> = {}
      for (const p of ast.propertySignatures) {
        if (p.type.context?.isOptional === true) continue
        const v = sample(p.type, String(p.name), samples, `${recordPath}.${String(p.name)}`)
        if (v === undefined) return undefined
        obj = { ...obj, [String(p.name)]: v }
      }
      return obj
    }
    default:
      return undefined
  }
}

/** Every case for the schema `root` (the encoded side of a config Schema's AST). */
export const generateCases = (root: SchemaAST.AST, samples: Samples): Case[] => {
  const cases: Case[] = []
  const encoded = SchemaAST.toEncoded(root)
  const visit = (ast: SchemaAST.AST, path: Path, container: unknown, dotted: string, depth: number) => {
    if (depth > 6) return
    // An optional field (`Schema.optional`): its value's own schema.
    const defined = ast._tag === "Union" ? ast.types.filter((t) => t._tag !== "Undefined") : []
    if (defined.length === 1 && defined[0] !== undefined)
      return visit(defined[0], path, container, dotted, depth)
    const here = (value: unknown) => set(container, path, value)
    if (ast._tag === "Objects") {
      const required = sample(ast, "", samples, dotted) as Record<string, unknown> | undefined
      const base = here(required ?? {})
      if (ast.indexSignatures.length === 0)
        cases.push({
          kind: "unknown key",
          path: [...path, "notAKey"],
          config: set(base, [...path, "notAKey"], 1),
          base
        })
      else cases.push({ kind: "wrong type", path, config: here("not-an-object"), base })
      for (const p of ast.propertySignatures) {
        const name = String(p.name)
        visit(p.type, [...path, name], base, `${dotted}.${name}`, depth + 1)
      }
      for (const i of ast.indexSignatures) {
        const key = samples.recordKeys[dotted.slice(1)] ?? "sample"
        const value = sample(i.type, key, samples, dotted)
        if (value === undefined) continue
        visit(i.type, [...path, key], set(base, [...path, key], value), `${dotted}.*`, depth + 1)
      }
      return
    }
    if (ast._tag === "Arrays") {
      const element = ast.rest[0]
      if (element === undefined) return
      const value = sample(element, String(path.at(-1) ?? ""), samples, dotted)
      const base = here(value === undefined ? [] : [value])
      cases.push({ kind: "wrong type", path, config: here("not-a-list"), base })
      if (value !== undefined) visit(element, [...path, 0], base, `${dotted}[]`, depth + 1)
      return
    }
    const name = String([...path].reverse().find((p) => typeof p === "string") ?? "")
    const valid = sample(ast, name, samples, dotted)
    if (valid === undefined) return
    const base = here(valid)
    if (isLiteralUnion(ast)) {
      cases.push({ kind: "bad enum", path, config: here("not-a-choice"), base })
      return
    }
    switch (ast._tag) {
      case "Number": {
        cases.push({ kind: "wrong type", path, config: here("ten"), base })
        const checks = checksOf(ast)
        if (checks.some((c) => c.includes("greater than or equal to 0") || c.includes("greater than 0")))
          cases.push({ kind: "negative", path, config: here(-1), base })
        if (checks.some((c) => /greater than 0|greater than or equal to 1\b/.test(c)))
          cases.push({ kind: "zero", path, config: here(0), base })
        return
      }
      case "String":
        cases.push({ kind: "wrong type", path, config: here({ not: "a string" }), base })
        return
      case "Boolean":
        cases.push({ kind: "wrong type", path, config: here("yes please"), base })
        return
      default:
        return
    }
  }
  visit(encoded, [], {}, "", 0)
  return cases
}
