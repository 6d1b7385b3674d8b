/**
 * ARC zonal shift REST-JSON routes (API 2022-10-30): GetManagedResource, ListZonalShifts,
 * ListAutoshifts, StartZonalShift, CancelZonalShift. Timestamps are epoch seconds.
 */
import { Schema } from "effect"
import { ArcError, type FakeZonalShift, type ZonalShiftStore } from "./ZonalShiftStore.ts"

export interface ArcReply {
  readonly status: number
  readonly body: unknown
}

const secs = (ms: number) => ms / 1000

const shiftJson = (store: ZonalShiftStore, s: FakeZonalShift) => ({
  zonalShiftId: s.zonalShiftId,
  resourceIdentifier: s.resourceIdentifier,
  awayFrom: s.awayFrom,
  startTime: secs(s.startTime),
  expiryTime: secs(s.expiryTime),
  comment: s.comment,
  shiftType: s.shiftType,
  status: store.status(s)
})

const StartZonalShiftBody = Schema.Struct({
  resourceIdentifier: Schema.String,
  awayFrom: Schema.String,
  expiresIn: Schema.String,
  comment: Schema.String
})

/** `expiresIn` as ARC takes it: `<n>m` or `<n>h`, 1 minute to 3 days. */
function parseExpiresIn(s: string): number {
  const m = /^(\d+)([mh])$/.exec(s)
  const ms = m ? Number(m[1]) * (m[2] === "h" ? 3_600_000 : 60_000) : Number.NaN
  if (!(ms >= 60_000 && ms <= 3 * 86_400_000)) {
    throw new ArcError("ValidationException", `Invalid expiresIn ${JSON.stringify(s)}`, 400)
  }
  return ms
}

/** Returns undefined when the path is not an ARC route. */
export function routeArc(
  store: ZonalShiftStore,
  method: string,
  url: URL,
  body: string
): ArcReply | undefined {
  const path = url.pathname
  const managed = /^\/managedresources\/([^/]+)$/.exec(path)
  if (managed && method === "GET") {
    const arn = decodeURIComponent(managed[1]!)
    if (!store.isRegistered(arn)) {
      throw new ArcError("ResourceNotFoundException", `The resource ${arn} was not found`, 404)
    }
    const shifts = store.active().filter((s) => s.resourceIdentifier === arn)
    const customer = shifts.some((s) => s.shiftType === "ZONAL_SHIFT")
    const zonalShifts = shifts.map((s) => ({
      ...shiftJson(store, s),
      // ARC applies one shift at a time: customer shift > autoshift > practice run.
      appliedStatus:
        s.shiftType === "ZONAL_SHIFT" || !store.activeAutoshifts().length ? "APPLIED" : "NOT_APPLIED"
    }))
    const autoshifts = store.activeAutoshifts().map((a) => ({
      awayFrom: a.awayFrom,
      startTime: secs(a.startTime),
      appliedStatus: customer ? "NOT_APPLIED" : "APPLIED"
    }))
    const away = new Set(
      [...zonalShifts, ...autoshifts].filter((s) => s.appliedStatus === "APPLIED").map((s) => s.awayFrom)
    )
    return {
      status: 200,
      body: {
        arn,
        name: arn.split("/").pop(),
        appliedWeights: Object.fromEntries(store.zoneIds().map((z) => [z, away.has(z) ? 0 : 1])),
        zonalShifts: zonalShifts.map(({ status: _status, ...rest }) => rest),
        autoshifts,
        zonalAutoshiftStatus: "ENABLED"
      }
    }
  }
  if (path === "/zonalshifts" && method === "GET") {
    const status = url.searchParams.get("status")
    const resource = url.searchParams.get("resourceIdentifier")
    const items = store
      .all()
      .map((s) => shiftJson(store, s))
      .filter(
        (s) => (status ? s.status === status : true) && (resource ? s.resourceIdentifier === resource : true)
      )
    return { status: 200, body: { items } }
  }
  if (path === "/zonalshifts" && method === "POST") {
    let req: typeof StartZonalShiftBody.Type
    try {
      req = Schema.decodeUnknownSync(StartZonalShiftBody)(JSON.parse(body))
    } catch (e) {
      throw new ArcError("ValidationException", e instanceof Error ? e.message : String(e), 400)
    }
    const shift = store.start({
      resourceIdentifier: req.resourceIdentifier,
      awayFrom: req.awayFrom,
      expiresInMs: parseExpiresIn(req.expiresIn),
      comment: req.comment
    })
    return { status: 200, body: shiftJson(store, shift) }
  }
  const one = /^\/zonalshifts\/([^/]+)$/.exec(path)
  if (one && method === "DELETE") {
    return { status: 200, body: shiftJson(store, store.cancel(decodeURIComponent(one[1]!))) }
  }
  if (path === "/autoshifts" && method === "GET") {
    const status = url.searchParams.get("status")
    const items = store
      .autoshifts()
      .map((a) => ({
        awayFrom: a.awayFrom,
        startTime: secs(a.startTime),
        ...(a.endTime === undefined ? {} : { endTime: secs(a.endTime) }),
        status: a.endTime === undefined ? "ACTIVE" : "COMPLETED"
      }))
      .filter((a) => (status ? a.status === status : true))
    return { status: 200, body: { items } }
  }
  return undefined
}
