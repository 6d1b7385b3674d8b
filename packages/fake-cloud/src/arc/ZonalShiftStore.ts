/**
 * Zonal shifts and autoshifts as ARC keeps them. Zone ids (`usw2-az1`) are what ARC speaks; the
 * admin side also accepts zone names and maps them. Time comes from `now()` so tests can move it.
 */
import { randomUUID } from "node:crypto"
import type { FakeZone } from "../zones.ts"

export interface FakeZonalShift {
  readonly zonalShiftId: string
  readonly resourceIdentifier: string
  readonly awayFrom: string
  readonly startTime: number
  readonly expiryTime: number
  readonly comment: string
  readonly shiftType: "ZONAL_SHIFT" | "PRACTICE_RUN" | "FIS_EXPERIMENT"
  canceled: boolean
}

export interface FakeAutoshift {
  readonly awayFrom: string
  readonly startTime: number
  endTime?: number
}

export class ArcError extends Error {
  readonly code: string
  readonly status: number
  constructor(code: string, message: string, status: number) {
    super(message)
    this.code = code
    this.status = status
  }
}

export class ZonalShiftStore {
  readonly #zones: ReadonlyArray<FakeZone>
  readonly #now: () => number
  readonly #shifts: FakeZonalShift[] = []
  readonly #autoshifts: FakeAutoshift[] = []
  readonly #resources: ReadonlyArray<string> | undefined

  /** `resources`: registered resource ARNs; undefined = every EKS cluster ARN counts as registered. */
  constructor(
    zones: ReadonlyArray<FakeZone>,
    resources?: ReadonlyArray<string>,
    now: () => number = Date.now
  ) {
    this.#zones = zones
    this.#resources = resources
    this.#now = now
  }

  zoneId(zoneOrId: string): string {
    const z = this.#zones.find((z) => z.zoneId === zoneOrId || z.name === zoneOrId)
    if (!z) throw new ArcError("ValidationException", `Unknown availability zone ${zoneOrId}`, 400)
    return z.zoneId
  }

  isRegistered(arn: string): boolean {
    return this.#resources
      ? this.#resources.includes(arn)
      : /^arn:aws[a-z-]*:eks:[a-z0-9-]+:\d{12}:cluster\/.+$/.test(arn)
  }

  start(req: {
    resourceIdentifier: string
    awayFrom: string
    expiresInMs: number
    comment?: string
    practiceRun?: boolean
  }): FakeZonalShift {
    if (!this.isRegistered(req.resourceIdentifier)) {
      throw new ArcError(
        "ResourceNotFoundException",
        `Resource ${req.resourceIdentifier} is not registered`,
        404
      )
    }
    const now = this.#now()
    const awayFrom = this.zoneId(req.awayFrom)
    if (
      this.active().some(
        (s) => s.resourceIdentifier === req.resourceIdentifier && s.shiftType === "ZONAL_SHIFT"
      )
    ) {
      throw new ArcError("ConflictException", "A zonal shift is already active for this resource", 409)
    }
    const shift: FakeZonalShift = {
      zonalShiftId: randomUUID(),
      resourceIdentifier: req.resourceIdentifier,
      awayFrom,
      startTime: now,
      expiryTime: now + req.expiresInMs,
      comment: req.comment ?? "",
      shiftType: req.practiceRun ? "PRACTICE_RUN" : "ZONAL_SHIFT",
      canceled: false
    }
    this.#shifts.push(shift)
    return shift
  }

  cancel(zonalShiftId: string): FakeZonalShift {
    const s = this.#shifts.find((s) => s.zonalShiftId === zonalShiftId)
    if (!s) throw new ArcError("ResourceNotFoundException", `Zonal shift ${zonalShiftId} not found`, 404)
    if (s.canceled || s.expiryTime <= this.#now()) {
      throw new ArcError("ConflictException", `Zonal shift ${zonalShiftId} is not active`, 409)
    }
    s.canceled = true
    return s
  }

  cancelAll(): number {
    const live = this.active()
    for (const s of live) s.canceled = true
    return live.length
  }

  startAutoshift(awayFromZone: string): FakeAutoshift {
    const awayFrom = this.zoneId(awayFromZone)
    const existing = this.#autoshifts.find((a) => a.awayFrom === awayFrom && a.endTime === undefined)
    if (existing) return existing
    const a: FakeAutoshift = { awayFrom, startTime: this.#now() }
    this.#autoshifts.push(a)
    return a
  }

  endAutoshift(awayFromZone: string): number {
    const awayFrom = this.zoneId(awayFromZone)
    let n = 0
    for (const a of this.#autoshifts) {
      if (a.awayFrom === awayFrom && a.endTime === undefined) {
        a.endTime = this.#now()
        n++
      }
    }
    return n
  }

  status(s: FakeZonalShift): "ACTIVE" | "EXPIRED" | "CANCELED" {
    if (s.canceled) return "CANCELED"
    return s.expiryTime > this.#now() ? "ACTIVE" : "EXPIRED"
  }

  active(): FakeZonalShift[] {
    return this.#shifts.filter((s) => this.status(s) === "ACTIVE")
  }

  all(): ReadonlyArray<FakeZonalShift> {
    return this.#shifts
  }

  autoshifts(): ReadonlyArray<FakeAutoshift> {
    return this.#autoshifts
  }

  activeAutoshifts(): FakeAutoshift[] {
    return this.#autoshifts.filter((a) => a.endTime === undefined)
  }

  zoneIds(): string[] {
    return this.#zones.map((z) => z.zoneId)
  }
}
