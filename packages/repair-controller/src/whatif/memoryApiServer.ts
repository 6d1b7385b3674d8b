/**
 * The API server as the what-if replay gives it to the controller: a `KubeHttp` (the port every informer and call
 * of the controller goes through) answering from memory, synchronously. It keeps objects by collection, namespace
 * and name with resourceVersions, answers get, list (label and field selectors, one page), create, replace, delete
 * (uid preconditions), merge, strategic-merge (a list of conditions merges by type) and JSON patches (with `test`),
 * evictions (no PodDisruptionBudget: the pod goes) and watches (from a resourceVersion, replayed from its log).
 * Request bodies are taken as JSON, as they reach a real API server (what the controller reads back is what JSON gives).
 * A Node created without a Ready condition gets one, True, as kwok's stage gives a kwok Node: the replay's cloud is
 * the kwok provider, whose machines are Nodes. Nothing here decides anything for the controller.
 */
import type { IncomingMessage } from "node:http"
import { Effect } from "effect"
import { type HttpMethod, KubeError, type KubeHttp } from "@nodemend/kube-access"
import { jsonCopy } from "./jsonCopy.ts"

export type Obj = Record<string, unknown> & { metadata?: Record<string, unknown> }

interface Target {
  /** `<group/version>/<plural>`, e.g. `v1/nodes`, `events.k8s.io/v1/events`. */
  readonly collection: string
  readonly namespace: string | undefined
  readonly name: string | undefined
  readonly sub: string | undefined
  readonly query: URLSearchParams
}

interface Change {
  readonly rv: number
  readonly collection: string
  readonly type: "ADDED" | "MODIFIED" | "DELETED"
  readonly object: Obj
}

interface Watcher {
  readonly target: Target
  readonly onEvent: (event: unknown) => void
}

/** A failed call, as the API server's Status (not an Error: no stack to capture, and 404s are frequent). */
class StatusError {
  readonly code: number
  readonly reason: string
  readonly message: string
  constructor(code: number, reason: string, message: string) {
    this.code = code
    this.reason = reason
    this.message = message
  }
}

/** How many changes a watch from an older resourceVersion can be replayed from (older: 410 Expired). */
const CHANGE_LOG = 20_000

export const parseTarget = (path: string): Target => {
  const q = path.indexOf("?")
  const segs = (q < 0 ? path : path.slice(0, q))
    .split("/")
    .filter((s) => s !== "")
    .map(decodeURIComponent)
  const [gv, rest0] = segs[0] === "api" ? [segs[1], segs.slice(2)] : [`${segs[1]}/${segs[2]}`, segs.slice(3)]
  let rest = rest0
  let namespace: string | undefined
  if (rest[0] === "namespaces" && rest.length >= 3) {
    namespace = rest[1]
    rest = rest.slice(2)
  }
  return {
    collection: `${gv}/${rest[0] ?? ""}`,
    namespace,
    name: rest[1],
    sub: rest[2],
    query: new URLSearchParams(q < 0 ? "" : path.slice(q + 1))
  }
}

const clone = <A>(a: A): A => structuredClone(a)
/**
 * A request body as the API server receives it, JSON: a key whose value is `undefined` is not sent (a merge
 * patch's `labels: undefined` leaves the labels as they are), a Date is its ISO string, NaN null. The controller's
 * bodies reach a real API server so; what is stored here is then JSON too, whatever copies it.
 */
const onTheWire = (body: unknown): unknown => (body === undefined ? undefined : jsonCopy(body))
const metaOf = (o: Obj): Record<string, unknown> => (o.metadata ??= {})
const labelsOf = (o: Obj): Record<string, string> => (metaOf(o).labels ?? {}) as Record<string, string>

/** Equality, inequality and existence terms, comma-separated (what the controller's selectors use). */
const matchesLabels = (o: Obj, selector: string | null): boolean => {
  if (selector === null || selector === "") return true
  const labels = labelsOf(o)
  return selector.split(",").every((term) => {
    const ne = term.indexOf("!=")
    if (ne >= 0) return labels[term.slice(0, ne)] !== term.slice(ne + 2)
    const eq = term.indexOf("=")
    if (eq < 0) return term.startsWith("!") ? !(term.slice(1) in labels) : term in labels
    return labels[term.slice(0, eq)] === term.slice(eq + (term[eq + 1] === "=" ? 2 : 1))
  })
}

const fieldOf = (o: Obj, path: string): unknown =>
  path.split(".").reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], o)

const matchesFields = (o: Obj, selector: string | null): boolean =>
  selector === null ||
  selector === "" ||
  selector.split(",").every((term) => {
    const [k, v] = term.split("=")
    return String(fieldOf(o, k ?? "") ?? "") === (v ?? "")
  })

/** RFC 7386; `strategic`: a list of objects with a `type` (conditions) merges by it, as the API server's SMP. */
const mergePatch = (target: unknown, patch: unknown, strategic: boolean): unknown => {
  if (typeof patch !== "object" || patch === null || Array.isArray(patch)) {
    if (strategic && Array.isArray(patch) && Array.isArray(target) && patch.every(hasType))
      return mergeByType(target, patch)
    return clone(patch)
  }
  const out: Record<string, unknown> =
    typeof target === "object" && target !== null && !Array.isArray(target) ? { ...target } : {}
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k]
    else out[k] = mergePatch(out[k], v, strategic)
  }
  return out
}
const hasType = (x: unknown): boolean => typeof x === "object" && x !== null && "type" in x
const mergeByType = (target: ReadonlyArray<unknown>, patch: ReadonlyArray<unknown>): unknown[] => {
  const out = target.map((x) => clone(x)) as Array<Record<string, unknown>>
  for (const p of patch as Array<Record<string, unknown>>) {
    const i = out.findIndex((x) => x.type === p.type)
    if (i < 0) out.push(clone(p))
    else out[i] = mergePatch(out[i], p, true) as Record<string, unknown>
  }
  return out
}

/** RFC 6902 with the ops the controller sends (test, add, replace, remove). */
const jsonPatch = (doc: Obj, ops: ReadonlyArray<Record<string, unknown>>): Obj => {
  const out = clone(doc)
  for (const op of ops) {
    const keys = String(op.path)
      .split("/")
      .slice(1)
      .map((k) => k.replaceAll("~1", "/").replaceAll("~0", "~"))
    const last = keys.pop() ?? ""
    let parent: unknown = out
    for (const k of keys) parent = (parent as Record<string, unknown> | undefined)?.[k]
    const container = parent as Record<string, unknown> | unknown[] | undefined
    const current = Array.isArray(container) ? container[Number(last)] : container?.[last]
    if (op.op === "test") {
      if (JSON.stringify(current) !== JSON.stringify(op.value))
        throw new StatusError(422, "Invalid", `the test of ${String(op.path)} failed`)
      continue
    }
    if (container === undefined) throw new StatusError(422, "Invalid", `no parent for ${String(op.path)}`)
    if (Array.isArray(container)) {
      const i = last === "-" ? container.length : Number(last)
      if (op.op === "add") container.splice(i, 0, clone(op.value))
      else if (op.op === "replace") container[i] = clone(op.value)
      else if (op.op === "remove") container.splice(i, 1)
    } else if (op.op === "remove") delete container[last]
    else container[last] = clone(op.value)
  }
  return out
}

export interface MemoryApiServer {
  readonly http: KubeHttp
  /** The objects of a collection (`v1/nodes`), as stored. */
  readonly objects: (collection: string) => ReadonlyArray<Obj>
  /** One stored object, not copied: read it, never change it. */
  readonly peek: (
    collection: string,
    namespace: string | undefined,
    name: string
  ) => Readonly<Obj> | undefined
  /** Told every change after it is made, before any watch (the replay's record of what the controller wrote). */
  readonly observe: (f: (collection: string, type: Change["type"], object: Obj) => void) => void
}

/** `now`: the replay's clock (creation and deletion times). */
export const makeMemoryApiServer = (now: () => number): MemoryApiServer => {
  const store = new Map<string, Map<string, Obj>>()
  const log: Change[] = []
  const watchers = new Set<Watcher>()
  const observers: Array<(collection: string, type: Change["type"], object: Obj) => void> = []
  let rv = 1
  let uids = 0

  const coll = (c: string) => {
    const m = store.get(c) ?? new Map<string, Obj>()
    store.set(c, m)
    return m
  }
  const key = (namespace: string | undefined, name: string) => `${namespace ?? ""}/${name}`
  const inWatch = (w: Watcher, c: Change) =>
    w.target.collection === c.collection &&
    (w.target.namespace === undefined || w.target.namespace === metaOf(c.object).namespace) &&
    matchesLabels(c.object, w.target.query.get("labelSelector")) &&
    matchesFields(c.object, w.target.query.get("fieldSelector"))
  const changed = (collection: string, type: Change["type"], object: Obj) => {
    // Stored objects are never changed once saved (save copies the metadata it stamps): the log and the observers
    // share them; each watcher gets its own copy (an informer may trim what it keeps).
    const c: Change = { rv, collection, type, object }
    log.push(c)
    if (log.length > 2 * CHANGE_LOG) log.splice(0, CHANGE_LOG)
    for (const f of observers) f(collection, type, c.object)
    for (const w of [...watchers]) if (inWatch(w, c)) w.onEvent({ type, object: clone(c.object) })
  }
  const stamp = (o: Obj) => {
    metaOf(o).resourceVersion = String(++rv)
    return o
  }
  const find = (t: Target): Obj => {
    const o = coll(t.collection).get(key(t.namespace, t.name ?? ""))
    if (o === undefined) throw new StatusError(404, "NotFound", `${t.collection} "${t.name}" not found`)
    return o
  }
  const save = (t: Target, o: Obj, type: Change["type"]) => {
    o.metadata = { ...metaOf(o) }
    stamp(o)
    coll(t.collection).set(key(t.namespace, String(metaOf(o).name)), o)
    changed(t.collection, type, o)
    return clone(o)
  }

  // `body` is this server's own copy (onTheWire parsed it): create and replace store it as it is.
  const create = (t: Target, body: Obj): Obj => {
    const o = body
    const m = metaOf(o)
    if (m.name === undefined && typeof m.generateName === "string") m.name = `${m.generateName}${++uids}`
    const name = String(m.name ?? "")
    if (coll(t.collection).has(key(t.namespace, name)))
      throw new StatusError(409, "AlreadyExists", `${t.collection} "${name}" already exists`)
    if (t.namespace !== undefined) m.namespace = t.namespace
    m.uid = `memory-${++uids}`
    m.creationTimestamp = new Date(now()).toISOString()
    if (t.collection === "v1/nodes") readyOnCreation(o)
    return save(t, o, "ADDED")
  }
  const readyOnCreation = (o: Obj) => {
    const status = (o.status ?? {}) as Record<string, unknown>
    const conditions = (status.conditions ?? []) as Array<Record<string, unknown>>
    o.status = status
    status.conditions = conditions
    if (conditions.some((c) => c.type === "Ready")) return
    const at = new Date(now()).toISOString()
    conditions.push({ type: "Ready", status: "True", reason: "KubeletReady", lastTransitionTime: at })
  }
  const remove = (t: Target, body: Obj | undefined): Obj => {
    const o = find(t)
    const uid = (body?.preconditions as { uid?: string } | undefined)?.uid
    if (uid !== undefined && uid !== metaOf(o).uid)
      throw new StatusError(409, "Conflict", `the uid precondition failed for ${t.name}`)
    coll(t.collection).delete(key(t.namespace, t.name ?? ""))
    const gone = stamp(clone(o))
    metaOf(gone).deletionTimestamp = new Date(now()).toISOString()
    changed(t.collection, "DELETED", gone)
    return gone
  }
  /** The API server keeps identity fields whatever a patch or a replace says (none where it has none: JSON). */
  const keepIdentity = (stored: Obj, next: Obj) => {
    for (const k of ["name", "namespace", "uid", "creationTimestamp"]) {
      const v = metaOf(stored)[k]
      if (v === undefined) delete metaOf(next)[k]
      else metaOf(next)[k] = v
    }
  }
  const patch = (t: Target, body: unknown, contentType: string | undefined): Obj => {
    const o = find(t)
    const next =
      contentType === "application/json-patch+json"
        ? jsonPatch(o, body as ReadonlyArray<Record<string, unknown>>)
        : (mergePatch(o, body, contentType === "application/strategic-merge-patch+json") as Obj)
    keepIdentity(o, next)
    return save(t, next, "MODIFIED")
  }
  const replace = (t: Target, body: Obj): Obj => {
    const o = find(t)
    const given = metaOf(body).resourceVersion
    if (given !== undefined && given !== metaOf(o).resourceVersion)
      throw new StatusError(409, "Conflict", `${t.name} was modified`)
    keepIdentity(o, body)
    return save(t, body, "MODIFIED")
  }
  const list = (t: Target) => ({
    apiVersion: "v1",
    kind: "List",
    metadata: { resourceVersion: String(rv) },
    items: [...coll(t.collection).values()]
      .filter(
        (o) =>
          (t.namespace === undefined || metaOf(o).namespace === t.namespace) &&
          matchesLabels(o, t.query.get("labelSelector")) &&
          matchesFields(o, t.query.get("fieldSelector"))
      )
      .map(clone)
  })

  const handle = (method: HttpMethod, t: Target, body: unknown, contentType: string | undefined): unknown => {
    if (t.sub === "eviction" && method === "POST")
      return remove({ ...t, sub: undefined }, (body as Obj | undefined)?.deleteOptions as Obj | undefined)
    switch (method) {
      case "GET":
        return t.name === undefined ? list(t) : clone(find(t))
      case "POST":
        return create(t, body as Obj)
      case "PUT":
        return replace(t, body as Obj)
      case "PATCH":
        return patch(t, body, contentType)
      case "DELETE":
        return remove(t, body as Obj | undefined)
    }
  }

  const failed = (operation: string, e: unknown): KubeError => {
    if (!(e instanceof StatusError)) throw e
    // No stack: an answer from memory has none worth keeping, and 404s are asked for every few seconds.
    const limit = Error.stackTraceLimit
    Error.stackTraceLimit = 0
    try {
      return new KubeError({
        operation,
        code: e.code,
        reason: e.reason,
        message: `${operation}: HTTP ${e.code} ${e.message}`
      })
    } finally {
      Error.stackTraceLimit = limit
    }
  }

  const http: KubeHttp = {
    server: "memory://what-if",
    call: (operation, method, path, body, contentType) =>
      Effect.suspend(() => {
        try {
          return Effect.succeed(handle(method, parseTarget(path), onTheWire(body), contentType))
        } catch (e) {
          return Effect.fail(failed(operation, e))
        }
      }),
    watch: (_operation, path, onEvent) =>
      Effect.callback<void, KubeError>((resume) => {
        const target = parseTarget(path)
        const from = Number(target.query.get("resourceVersion") ?? rv)
        const first = log[0]
        if (from < rv && (first === undefined || first.rv > from + 1)) {
          onEvent({ type: "ERROR", object: { kind: "Status", code: 410, reason: "Expired" } })
          resume(Effect.void)
          return undefined
        }
        const w: Watcher = { target, onEvent }
        for (const c of log)
          if (c.rv > from && inWatch(w, c)) onEvent({ type: c.type, object: clone(c.object) })
        watchers.add(w)
        return Effect.sync(() => {
          watchers.delete(w)
        })
      }),
    stream: (path): Promise<IncomingMessage> =>
      Promise.reject(new Error(`${path}: the what-if replay has no node to read files from`)),
    close: () => undefined
  }

  return {
    http,
    objects: (collection) => [...coll(collection).values()].map(clone),
    peek: (collection, namespace, name) => coll(collection).get(key(namespace, name)),
    observe: (f) => {
      observers.push(f)
    }
  }
}
