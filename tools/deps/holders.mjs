// Lists the repair controller's in-memory state holders: the variables a factory (`make*`/`start*`, a function or
// a class) keeps across calls, and mutable module-level variables. A holder is a `let`, or a `const` made with
// `new Map`/`new Set`/`new WeakMap`/`Ref.make`, declared in the factory's own body (in an `Effect.gen` body too),
// not inside the functions it returns. docs/architecture.md ("In-memory state") lists each one with why a restart
// may lose it; test/architectureDoc.test.ts checks the two agree.
//   node tools/deps/holders.mjs            one line per factory: file factory: variables
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { parseSync } from "@swc/core"

const ROOT = join(import.meta.dirname, "..", "..")
export const SRC = join(ROOT, "packages/repair-controller/src")

const files = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []
  )

const FACTORY = /^(make|start)[A-Z]/
const FUNCTION = new Set(["ArrowFunctionExpression", "FunctionExpression"])

/** Whether a function hands out closures over its body: it returns an object with a function among its values. */
const returnsClosures = (fn, stmts) => {
  const local = new Set(
    stmts
      .filter((s) => s.type === "VariableDeclaration")
      .flatMap((d) => d.declarations)
      .filter((v) => v.id.type === "Identifier" && FUNCTION.has(v.init?.type))
      .map((v) => v.id.value)
  )
  const isFunction = (e) => FUNCTION.has(e.type) || (e.type === "Identifier" && local.has(e.value))
  const closures = (e) =>
    e?.type === "ObjectExpression" &&
    e.properties.some(
      (p) =>
        p.type === "MethodProperty" ||
        (p.type === "Identifier" && local.has(p.value)) ||
        (p.type === "KeyValueProperty" && isFunction(p.value))
    )
  const body = fn.body?.type === "ParenthesisExpression" ? fn.body.expression : fn.body
  return closures(body) || stmts.some((s) => s.type === "ReturnStatement" && closures(s.argument))
}
const STATEFUL =
  /^(new (Map|Set|WeakMap)\b|(yield\* )?(Ref|SynchronizedRef|MutableRef|Queue|PubSub)\.(make|unbounded|bounded|sliding|dropping)\b)/

/** The statements of a factory's own body: a block, or the body of the `Effect.gen` generator it returns. */
const ownStatements = (fn) => {
  const body = fn.body
  if (body === undefined || body === null) return []
  if (body.type === "BlockStatement" || body.type === "FunctionBody") {
    const stmts = body.stmts
    const ret = stmts.find((s) => s.type === "ReturnStatement")
    return [...stmts, ...(ret?.argument ? generatorStatements(ret.argument) : [])]
  }
  return generatorStatements(body)
}
/** `Effect.gen(function* () {...})`, `Effect.fn("name")(function* ...)`, `Effect.sync(() => {...})`: the body. */
const generatorStatements = (expr) => {
  if (expr.type !== "CallExpression") return []
  const fn = expr.arguments
    .map((a) => a.expression)
    .find((a) => a.type === "FunctionExpression" || a.type === "ArrowFunctionExpression")
  return fn === undefined ? [] : ownStatements(fn)
}

const holdersIn = (stmts, code, offset, stateful = STATEFUL) => {
  const textOf = (node) => code.subarray(node.span.start - offset, node.span.end - offset).toString()
  const nameOf = (v) => (v.id.type === "Identifier" ? v.id.value : "(pattern)")
  return stmts
    .filter((s) => s.type === "VariableDeclaration")
    .flatMap((d) =>
      d.declarations.flatMap((v) => {
        if (d.kind === "let") return [nameOf(v)]
        if (v.init === undefined || v.init === null) return []
        if (stateful.test(textOf(v.init))) return [nameOf(v)]
        // `{ ...ports, launched: new Set() }`: a collection kept inside a record the factory builds.
        if (v.init.type !== "ObjectExpression") return []
        return v.init.properties
          .filter((p) => p.type === "KeyValueProperty" && stateful.test(textOf(p.value)))
          .map((p) => `${nameOf(v)}.${p.key.value}`)
      })
    )
}

export const scanHolders = () => {
  const out = []
  for (const file of files(SRC)) {
    // swc's spans are byte positions in all the code parsed in this process: a leading `0;` marks where this starts.
    const code = Buffer.from(`0;\n${readFileSync(file, "utf8").replace(/^#!/, "//")}`)
    const ast = parseSync(code.toString(), { syntax: "typescript", target: "es2022" })
    const offset = ast.body[0].span.start
    const rel = relative(SRC, file)
    const add = (factory, vars) => {
      if (vars.length > 0) out.push({ file: rel, factory, vars })
    }
    /** A `make*`/`start*` function, or one that returns closures: what its own body declares is kept. */
    const factory = (name, fn) => {
      const stmts = ownStatements(fn)
      if (FACTORY.test(name) || returnsClosures(fn, stmts)) add(name, holdersIn(stmts, code, offset))
    }
    const moduleVars = []
    for (const item of ast.body) {
      const decl = item.type === "ExportDeclaration" ? item.declaration : item
      if (decl.type === "FunctionDeclaration") factory(decl.identifier.value, decl)
      if (decl.type === "ClassDeclaration")
        add(
          decl.identifier.value,
          decl.body
            .filter((m) => m.type === "ClassProperty" && !m.isStatic && m.value)
            .filter((m) =>
              STATEFUL.test(code.subarray(m.value.span.start - offset, m.value.span.end - offset).toString())
            )
            .map((m) => m.key.value)
        )
      if (decl.type !== "VariableDeclaration") continue
      // At module level only a `let` or an empty collection is state; a filled Set is a constant.
      moduleVars.push(...holdersIn([decl], code, offset, /^new (Map|Set|WeakMap)(<.*>)?\(\)$/s))
      for (const v of decl.declarations) {
        if (v.id.type !== "Identifier") continue
        if (FUNCTION.has(v.init?.type)) factory(v.id.value, v.init)
        else if (v.init?.type === "CallExpression" && FACTORY.test(v.id.value))
          add(v.id.value, holdersIn(generatorStatements(v.init), code, offset))
      }
    }
    add("(module)", moduleVars)
  }
  return out.sort((a, b) => `${a.file} ${a.factory}`.localeCompare(`${b.file} ${b.factory}`))
}

if (import.meta.url === `file://${process.argv[1]}`)
  for (const h of scanHolders()) console.log(`${h.file} ${h.factory}: ${h.vars.join(", ")}`)
