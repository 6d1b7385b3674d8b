/**
 * One-shot check on a machine with a real NVIDIA GPU: loads the real libnvidia-ml.so.1 (and libdcgm.so.4 with
 * nv-hostengine, when present) through @nodemend/dcgm-native and prints device count, PCI info, fabric state,
 * clock event reasons, retired pages / remapped rows, XID event registration, DCGM health watches and a decoded
 * dcgmHealthCheck response, and a short DCGM diagnostic, asserting the decoding invariants. Run it
 * through bench/gpu-device-check.sh. Exit codes: 0 all invariants hold, 1 an invariant failed, 2 no NVIDIA
 * library on this machine ("library missing"), 3 a step timed out.
 *
 * Environment: NVML_LIBRARY, DCGM_LIBRARY (paths), DCGM_ADDRESS (default localhost:5555; "embedded" for an
 * in-process engine), EVENT_WAIT_MS (default 3000), DIAG_LEVEL (default 1 = short diagnostic, ~1 min; 0 skips it).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import {
  Dcgm,
  DcgmReturn,
  EntityGroup,
  FieldId,
  DCGM_HEALTH_WATCH_MAX_INCIDENTS,
  DIAG_RESPONSE_RESULTS_MAX,
  DIAG_TEST_NAMES,
  type DiagLevel,
  type FieldReading,
  HealthSystem,
  Nvml,
  NvmlEventType,
  NvmlReturn
} from "@nodemend/dcgm-native"
import { Duration, Effect, Layer, Stream } from "effect"
import {
  clockEventFailures,
  clockEventReasonNames
} from "../packages/agent/src/monitors/nvidia/clock-event-reasons.ts"
import { decodeFabricHealthMask } from "../packages/agent/src/monitors/nvidia/fabric-health-mask.ts"
import { fmStatusFromNvml } from "../packages/agent/src/monitors/nvidia/polled-findings.ts"
import { normalizePci } from "../packages/agent/src/monitors/nvidia/xid-dedupe.ts"

const NVML_LIBRARY = process.env.NVML_LIBRARY ?? "libnvidia-ml.so.1"
const DCGM_LIBRARY = process.env.DCGM_LIBRARY ?? "libdcgm.so.4"
const DCGM_ADDRESS = process.env.DCGM_ADDRESS ?? "localhost:5555"
const EVENT_WAIT_MS = Number(process.env.EVENT_WAIT_MS ?? 3000)
const DIAG_LEVEL = Number(process.env.DIAG_LEVEL ?? 1)

const failures: string[] = []
const check = (ok: boolean, what: string): void => {
  console.log(`  ${ok ? "ok  " : "FAIL"} ${what}`)
  if (!ok) failures.push(what)
}
const hex = (n: number | bigint) => `0x${n.toString(16)}`
const step = <A, E, R>(name: string, seconds: number, eff: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    console.log(`\n== ${name}`)
    const started = performance.now()
    const r = yield* eff.pipe(
      Effect.timeoutOrElse({
        duration: Duration.seconds(seconds),
        orElse: () =>
          Effect.sync(() => {
            console.log(`  TIMEOUT after ${seconds} s`)
            process.exitCode = 3
            failures.push(`${name} timed out`)
            return undefined
          })
      })
    )
    console.log(`  (${(performance.now() - started).toFixed(0)} ms)`)
    return r
  })

const deviceFiles = (() => {
  try {
    return readdirSync("/dev").filter((n) => /^nvidia[0-9]+$/.test(n)).length
  } catch {
    return undefined
  }
})()

const nvmlChecks = Effect.gen(function* () {
  const nvml = yield* Nvml
  const count = (yield* step("NVML device count", 30, nvml.deviceCount))!
  console.log(`  NVML devices: ${count}; /dev/nvidia[0-9]*: ${deviceFiles ?? "unreadable"}`)
  check(
    Number.isInteger(count) && count >= 0 && count <= 64,
    `device count ${count} is a small non-negative integer`
  )
  if (deviceFiles !== undefined && process.env.NMDOUBLE_NVML_DEVICES === undefined)
    check(deviceFiles === count, `device files (${deviceFiles}) == NVML count (${count})`)
  const masks: number[] = []
  const pciAddresses: string[] = []
  for (let i = 0; i < count; i++) {
    yield* step(
      `GPU ${i}`,
      60,
      Effect.gen(function* () {
        const handle = yield* Effect.result(nvml.device(i))
        if (handle._tag === "Failure") {
          console.log(`  handle: ${handle.failure.message}`)
          check(
            handle.failure.code === NvmlReturn.NO_PERMISSION ||
              handle.failure.code === NvmlReturn.GPU_IS_LOST,
            `GPU ${i} handle error is one the monitor handles (${handle.failure.code})`
          )
          return
        }
        check(
          typeof handle.success === "bigint" && handle.success !== 0n,
          `GPU ${i} handle is a non-null pointer (BigInt)`
        )

        const pci = yield* Effect.result(nvml.pciInfo(i))
        if (pci._tag === "Success") {
          const p = pci.success
          console.log(
            `  PCI ${p.busId}: domain ${hex(p.domain)} bus ${hex(p.bus)} device ${hex(p.device)}, id ${hex(p.pciDeviceId)}, subsystem ${hex(p.pciSubSystemId)}`
          )
          const m = /^([0-9A-Fa-f]{8}):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.([0-7])$/.exec(p.busId)
          check(m !== null, `busId "${p.busId}" is dddddddd:bb:dd.f (nvmlPciInfo_t.busId at offset 36)`)
          if (m !== null)
            check(
              Number.parseInt(m[1]!, 16) === p.domain &&
                Number.parseInt(m[2]!, 16) === p.bus &&
                Number.parseInt(m[3]!, 16) === p.device,
              "busId agrees with the domain/bus/device fields (offsets 16/20/24)"
            )
          check(
            (p.pciDeviceId & 0xffff) === 0x10de,
            `pciDeviceId ${hex(p.pciDeviceId)} has vendor 0x10de in the low 16 bits`
          )
          const norm = normalizePci(p.busId)
          if (norm !== undefined) pciAddresses.push(norm)
          const sysDir = `/sys/bus/pci/devices/${p.busId.slice(-12).toLowerCase()}`
          // (a dry run against the test doubles has no such sysfs entries)
          if (existsSync("/sys/bus/pci/devices") && process.env.NMDOUBLE_NVML_DEVICES === undefined) {
            const vendor = existsSync(`${sysDir}/vendor`)
              ? readFileSync(`${sysDir}/vendor`, "utf8").trim()
              : "absent"
            check(vendor === "0x10de", `${sysDir} exists with vendor 0x10de (got ${vendor})`)
          }
        } else {
          console.log(`  PCI info: ${pci.failure.message}`)
          check(false, `nvmlDeviceGetPciInfo_v3 works on GPU ${i}`)
        }

        const clocks = yield* Effect.result(nvml.clockEventReasons(i))
        if (clocks._tag === "Success") {
          const mask = clocks.success
          console.log(
            `  clock event reasons ${hex(mask)}: [${clockEventReasonNames(mask).join(", ")}]; failures: [${clockEventFailures(mask).join(", ")}]`
          )
          check(typeof mask === "bigint", "clock reasons decoded as BigInt")
          check((mask & ~0x1ffn) === 0n, `clock reasons ${hex(mask)} use only documented bits (0x1FF)`)
        } else console.log(`  clock event reasons: ${clocks.failure.message}`)

        const fabric = yield* Effect.result(nvml.fabricInfo(i))
        if (fabric._tag === "Success") {
          const f = fabric.success
          const d = decodeFabricHealthMask(f.healthMask)
          masks.push(f.healthMask)
          console.log(
            `  fabric info v${f.version}: state ${f.state}, status ${f.status}, clique ${f.cliqueId}, healthMask ${hex(f.healthMask)} -> ${d.fields.map((x) => `${x.name}=${x.value}`).join(" ")}; summary ${f.healthSummary ?? "n/a"}; FM status (DCGM numbering) ${fmStatusFromNvml(f.state, f.status)}`
          )
          check(f.state >= 0 && f.state <= 3, `fabric state ${f.state} in 0..3`)
          check(
            (f.healthMask & ~0x3fff) === 0,
            `healthMask ${hex(f.healthMask)} has no bits above partition_assigned`
          )
          for (const x of d.fields)
            check(
              x.name === "incorrect_configuration" ? x.value <= 8 : x.value <= 2,
              `sub-field ${x.name}=${x.value} is a documented value`
            )
          if (f.healthSummary !== undefined) {
            check(f.healthSummary <= 3, `healthSummary ${f.healthSummary} in 0..3`)
            if (f.healthSummary === 1)
              check(
                d.faults.length === 0,
                "driver says healthy (summary 1) and our per-sub-field decode finds no fault"
              )
            if (f.healthSummary === 2)
              check(
                d.faults.length > 0,
                "driver says unhealthy (summary 2) and our decode names a faulting sub-field"
              )
          }
        } else {
          console.log(`  fabric info: ${fabric.failure.message}`)
          check(
            fabric.failure.code === NvmlReturn.NOT_SUPPORTED ||
              fabric.failure.code === NvmlReturn.FUNCTION_NOT_FOUND,
            "fabric info unsupported is reported as NOT_SUPPORTED/FUNCTION_NOT_FOUND"
          )
        }

        for (const cause of [0, 1] as const) {
          const pages = yield* Effect.result(nvml.retiredPages(i, cause))
          if (pages._tag === "Success")
            console.log(
              `  retired pages (${cause === 0 ? "multiple SBE" : "DBE"}): ${pages.success.addresses.length}`
            )
          else console.log(`  retired pages (cause ${cause}): ${pages.failure.message}`)
        }
        const rows = yield* Effect.result(nvml.remappedRows(i))
        if (rows._tag === "Success") {
          const r = rows.success
          console.log(
            `  remapped rows: correctable ${r.correctable}, uncorrectable ${r.uncorrectable}, pending ${r.pending}, failure ${r.failureOccurred}`
          )
          check(r.correctable < 1 << 20 && r.uncorrectable < 1 << 20, "remapped row counts are plausible")
        } else console.log(`  remapped rows: ${rows.failure.message}`)
      })
    )
  }

  yield* step(
    `event registration (XID | DBE | SBE) and a ${EVENT_WAIT_MS} ms wait off the main thread`,
    60,
    Effect.gen(function* () {
      let ticks = 0
      const timer = setInterval(() => ticks++, 10)
      const events = yield* nvml
        .events(
          NvmlEventType.XidCriticalError | NvmlEventType.DoubleBitEccError | NvmlEventType.SingleBitEccError,
          500
        )
        .pipe(
          Stream.interruptWhen(Effect.sleep(Duration.millis(EVENT_WAIT_MS))),
          Stream.runCollect,
          Effect.result
        )
      clearInterval(timer)
      if (events._tag === "Failure") {
        console.log(`  events: ${events.failure.message}`)
        check(false, "event set created and registered on every device")
        return
      }
      check(true, "event set created and registered on every device (NOT_SUPPORTED tolerated per device)")
      check(
        ticks > EVENT_WAIT_MS / 10 / 2,
        `main thread stayed responsive during waits (${ticks} timer ticks)`
      )
      for (const e of events.success) {
        console.log(`  event: device ${e.deviceIndex} type ${hex(e.eventType)} data ${e.eventData}`)
        check(e.deviceIndex >= 0 && e.deviceIndex < count, "event names a known device")
      }
      console.log(`  ${events.success.length} event(s) in ${EVENT_WAIT_MS} ms`)
    })
  )
  yield* step(
    "XID-only event registration (what the monitor registers)",
    30,
    Effect.gen(function* () {
      const r = yield* nvml
        .events(NvmlEventType.XidCriticalError, 200)
        .pipe(Stream.interruptWhen(Effect.sleep(Duration.millis(1000))), Stream.runCollect, Effect.result)
      if (r._tag === "Failure") console.log(`  ${r.failure.message}`)
      check(r._tag === "Success", "XID event set registered on every device")
    })
  )
  return { count, masks, pciAddresses }
})

const dcgmChecks = (
  nvmlCount: number | undefined,
  nvmlMasks: readonly number[],
  nvmlPci: readonly string[]
) =>
  Effect.gen(function* () {
    const dcgm = yield* Dcgm
    const target =
      DCGM_ADDRESS === "embedded"
        ? ({ _tag: "Embedded" } as const)
        : ({ _tag: "Standalone", address: DCGM_ADDRESS } as const)
    const session = yield* step(
      `DCGM connect (${DCGM_ADDRESS}) + policy registration + watches`,
      60,
      Effect.result(dcgm.connect(target))
    )
    if (session === undefined) return
    if (session._tag === "Failure") {
      console.log(`  ${session.failure.message}`)
      console.log("  (no reachable host engine: DCGM checks skipped)")
      return
    }
    const s = session.success
    check(true, `connected, policy callback registered, fields watched; ${s.switchWatch.detail}`)
    const ids = yield* step("DCGM device count", 30, s.gpuIds)
    if (ids !== undefined) {
      console.log(`  DCGM GPUs: ${ids.join(", ")}`)
      if (nvmlCount !== undefined)
        check(ids.length === nvmlCount, `DCGM count (${ids.length}) == NVML count (${nvmlCount})`)
    }
    yield* step(
      "DCGM latest values (170, 174, 112, 57)",
      60,
      Effect.gen(function* () {
        const rs = yield* s.latest([
          FieldId.FABRIC_MANAGER_STATUS,
          FieldId.FABRIC_HEALTH_MASK,
          FieldId.CLOCKS_EVENT_REASONS
        ])
        const live = yield* s.latest([FieldId.PCI_BUS_ID], undefined, { live: true })
        const show = (r: FieldReading) =>
          `gpu${r.entityId} f${r.fieldId} status ${r.status} ${r.value._tag === "Int" ? hex(r.value.value) : r.value._tag === "Blank" ? `<${r.value.kind}>` : JSON.stringify(r.value)}`
        for (const r of [...rs, ...live]) console.log(`  ${show(r)}`)
        for (const r of rs) {
          check(r.entityGroupId === EntityGroup.GPU, `f${r.fieldId} record names a GPU entity`)
          check(
            r.status === DcgmReturn.OK ||
              r.status === DcgmReturn.NO_DATA ||
              r.status === DcgmReturn.NOT_SUPPORTED ||
              r.status === DcgmReturn.NOT_WATCHED,
            `f${r.fieldId} gpu${r.entityId} status ${r.status} is one the monitor handles`
          )
          if (r.value._tag === "Int")
            check(r.value.value < 0x7ffffffffffffff0n, "non-blank int64 below the BLANK sentinel")
        }
        const dcgmPci = live
          .map((r) => (r.value._tag === "String" ? normalizePci(r.value.value) : undefined))
          .filter((x): x is string => x !== undefined)
          .sort()
        if (dcgmPci.length > 0 && nvmlPci.length > 0)
          check(
            JSON.stringify(dcgmPci) === JSON.stringify([...nvmlPci].sort()),
            `DCGM field 57 PCI ids ${dcgmPci.join(",")} == NVML busIds ${[...nvmlPci].sort().join(",")} (XID dedupe keys)`
          )
        const dcgmMasks = rs
          .filter((r) => r.fieldId === FieldId.FABRIC_HEALTH_MASK && r.value._tag === "Int")
          .map((r) => Number((r.value as { value: bigint }).value))
          .sort()
        if (dcgmMasks.length > 0 && nvmlMasks.length > 0)
          check(
            JSON.stringify(dcgmMasks) === JSON.stringify([...nvmlMasks].sort()),
            `DCGM field 174 masks ${dcgmMasks.map(hex)} == NVML healthMask ${nvmlMasks.map(hex)}`
          )
      })
    )
    yield* step(
      "DCGM values since 5 min ago (XID history, SXids)",
      60,
      Effect.gen(function* () {
        const rs = yield* s.since((Date.now() - 300_000) * 1000)
        console.log(`  ${rs.length} sample(s)`)
        for (const r of rs.filter((x) => x.fieldId === FieldId.XID_ERROR))
          console.log(
            `  XID sample gpu${r.entityId}: ${JSON.stringify(r.value, (_, v) => (typeof v === "bigint" ? String(v) : v))}`
          )
      })
    )
    yield* step(
      "DCGM health watches (dcgmHealthSet ALL at session open) and dcgmHealthCheck",
      60,
      Effect.gen(function* () {
        const h = (yield* s.healthSystems) >>> 0
        console.log(`  watched systems ${hex(h)}`)
        check(
          (h & 0xfff) === 0xfff,
          `every GPU health system is watched (${hex(h)} has PCIe..NVSwitch-fatal 0xFFF)`
        )
        const report = yield* Effect.result(s.healthCheck)
        if (report._tag === "Failure") {
          console.log(`  dcgmHealthCheck: ${report.failure.message}`)
          check(false, "dcgmHealthCheck accepts dcgmHealthResponse_version5 (0x0510500C)")
          return
        }
        const r = report.success
        console.log(`  overall ${r.overallHealth}, ${r.incidents.length} incident(s)`)
        for (const x of r.incidents)
          console.log(
            `  incident system ${hex(x.system)} ${x.health} code ${x.code} entity ${x.entityGroupId}/${x.entityId}: ${x.message}`
          )
        check(true, "dcgmHealthCheck accepted version 0x0510500C and the response decoded")
        check(r.incidents.length <= DCGM_HEALTH_WATCH_MAX_INCIDENTS, "incidentCount within the 1024 slots")
        const worst = r.incidents.some((x) => x.health === "Fail")
          ? "Fail"
          : r.incidents.some((x) => x.health === "Warn")
            ? "Warn"
            : "Pass"
        check(r.overallHealth === worst, `overallHealth ${r.overallHealth} == worst incident (${worst})`)
        for (const x of r.incidents) {
          check(
            Object.values(HealthSystem).includes(x.system as never) && x.system !== HealthSystem.ALL,
            `incident system ${hex(x.system)} is one dcgmHealthSystems_t bit`
          )
          check(x.health !== "Pass", "an incident is WARN or FAIL")
          check(x.entityGroupId <= 10, `entity group ${x.entityGroupId} is a dcgm_field_entity_group_t`)
          check(x.code > 0 && x.code < 1000, `code ${x.code} is a dcgmError_t`)
          check(
            x.message.length > 0 && /^[\x20-\x7e\t\n]*$/.test(x.message),
            "message is printable text (msg at offset 8)"
          )
        }
      })
    )
    if (DIAG_LEVEL >= 1 && DIAG_LEVEL <= 4)
      yield* step(
        `DCGM diagnostic level ${DIAG_LEVEL} (dcgmRunDiagnostic, dcgmDiagResponse_version12 0x0C155ABC)`,
        240,
        Effect.gen(function* () {
          const r = yield* Effect.result(s.runDiagnostic(DIAG_LEVEL as DiagLevel))
          if (r._tag === "Failure") {
            console.log(`  ${r.failure.message}`)
            const code = r.failure._tag === "DcgmCallFailed" ? r.failure.code : DcgmReturn.VER_MISMATCH
            // not supported / nvvs missing / already running are environment answers; a version mismatch is ours
            check(
              code !== DcgmReturn.VER_MISMATCH,
              `dcgmRunDiagnostic did not refuse the struct version (${code})`
            )
            return
          }
          const results = r.success.results
          console.log(`  ${results.length} result(s)`)
          for (const x of results)
            console.log(
              `  ${x.testName} entity ${x.entityGroupId}/${x.entityId}: ${x.result}${x.errorMessage ? ` (${x.errorCode}: ${x.errorMessage})` : ""}`
            )
          check(results.length > 0 && results.length <= DIAG_RESPONSE_RESULTS_MAX, "numResults in 1..20480")
          for (const x of results) {
            check(
              x.testId in DIAG_TEST_NAMES || x.testId <= 17,
              `test id ${x.testId} is a dcgmPerGpuTestIndices_t`
            )
            check(
              x.entityGroupId === EntityGroup.NONE ||
                x.entityGroupId === EntityGroup.GPU ||
                x.entityGroupId === 9,
              `result entity group ${x.entityGroupId} is NONE/GPU/CONNECTX`
            )
            if (x.entityGroupId === EntityGroup.GPU && ids !== undefined)
              check(ids.includes(x.entityId), `result GPU ${x.entityId} is one of DCGM's GPUs`)
          }
          check(
            results.some((x) => x.testName === "software"),
            "the software test reported results"
          )
        })
      )
  }).pipe(Effect.scoped)

const main = Effect.gen(function* () {
  console.log(
    `nodemend GPU device check: ${new Date().toISOString()}, node ${process.version}, ${process.arch}`
  )
  const nvmlLayer = Nvml.layer(NVML_LIBRARY)
  const dcgmLayer = Dcgm.layer(DCGM_LIBRARY)
  const nvml = yield* Effect.result(nvmlChecks.pipe(Effect.provide(nvmlLayer)))
  if (nvml._tag === "Failure") console.log(`\nNVML: ${nvml.failure.message}`)
  const dcgm = yield* Effect.result(
    dcgmChecks(
      nvml._tag === "Success" ? nvml.success.count : undefined,
      nvml._tag === "Success" ? nvml.success.masks : [],
      nvml._tag === "Success" ? nvml.success.pciAddresses : []
    ).pipe(Effect.provide(dcgmLayer))
  )
  if (dcgm._tag === "Failure") console.log(`\nDCGM: ${dcgm.failure.message}`)
  const missing = [nvml, dcgm].every((r) => r._tag === "Failure" && r.failure._tag === "LibraryMissing")
  if (!missing) {
    console.log(
      `\n== summary: ${failures.length === 0 ? "all invariants hold" : `${failures.length} failed`}`
    )
    for (const f of failures) console.log(`  FAIL ${f}`)
  }
  if (missing) {
    console.log(
      "library missing: neither libnvidia-ml.so.1 nor libdcgm.so.4 could be loaded (no NVIDIA driver here)"
    )
    process.exitCode = 2
  } else if (failures.length > 0 && process.exitCode !== 3) process.exitCode = 1
})

Effect.runPromise(main.pipe(Effect.provide(Layer.empty))).catch((e: unknown) => {
  console.error("device check crashed:", e)
  process.exitCode = 1
})
