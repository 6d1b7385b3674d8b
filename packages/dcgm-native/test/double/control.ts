/**
 * The DCGM test double's control channel, for a process other than the one that loaded it (the demo's
 * `nodemend inject` writes into a running agent's double). The double started with NMDOUBLE_DCGM_POLICY_FIFO=<path>
 * (read at dcgmInit) reads dcgmPolicyCallbackResponse_v2 records from that FIFO and delivers each through the
 * registered policy callbacks from a thread of its own, as nv-hostengine does; a line per record in `<path>.log`
 * says how many registrations it reached (DCGM drops a violation nobody registered for, and so does the double).
 *
 * The record is encoded here by hand, byte by byte, from the vendor header (dcgm_structs.h v4.6.0,
 * ../shared/reference/dcgm-nvml.md §2.4), independently of the koffi layouts the agent decodes with:
 *   0  u32 version   = sizeof (32) | 2 << 24 (dcgmPolicyCallbackResponse_version2)
 *   4  u32 condition = one dcgmPolicyCondition_t bit
 *   8  union val (8-aligned, 16 bytes), every member starting with `long long timestamp` (µs since the epoch):
 *        dbe      {ts; u32 location @16; u32 numerrors @20}
 *        pci      {ts; u32 counter @16}
 *        mpr      {ts; u32 sbepages @16; u32 dbepages @20}
 *        thermal  {ts; u32 thermalViolation @16}
 *        power    {ts; u32 powerViolation @16}
 *        nvlink   {ts; u16 fieldId @16; 2 bytes padding; u32 counter @20}
 *        xid      {ts; u32 errnum @16}
 *  24  u32 gpuId, 4 bytes tail padding (the struct is 8-aligned)
 * Writes of 32 bytes are below PIPE_BUF, so records of concurrent writers never interleave.
 */
import { closeSync, constants, existsSync, openSync, readFileSync, writeSync } from "node:fs"
import type { PolicyFire } from "./injector.ts"

/** The environment variable that names the FIFO; read by the double's dcgmInit. */
export const POLICY_FIFO_ENV = "NMDOUBLE_DCGM_POLICY_FIFO"
/** Where a simulated host keeps it, relative to its host root. */
export const POLICY_FIFO_IN_HOST = "run/nvidia-dcgm/policy-violations"

export const POLICY_RESPONSE_SIZE = 32
const POLICY_RESPONSE_VERSION2 = (POLICY_RESPONSE_SIZE | (2 << 24)) >>> 0

/** dcgmPolicyCondition_t bits (dcgm_structs.h). */
export const POLICY_CONDITION_BITS = {
  DBE: 0x1,
  PCI: 0x2,
  MPR: 0x4,
  THERMAL: 0x8,
  POWER: 0x10,
  NVLINK: 0x20,
  XID: 0x40
} as const

/** The 32 bytes of dcgmPolicyCallbackResponse_v2 for `v`, little-endian as on x86-64 and aarch64. */
export const encodePolicyResponse = (v: PolicyFire, timestampUs: number): Buffer => {
  const b = Buffer.alloc(POLICY_RESPONSE_SIZE)
  b.writeUInt32LE(POLICY_RESPONSE_VERSION2, 0)
  b.writeUInt32LE(POLICY_CONDITION_BITS[v.condition], 4)
  b.writeBigInt64LE(BigInt(Math.trunc(timestampUs)), 8)
  switch (v.condition) {
    case "DBE":
      b.writeUInt32LE(v.location, 16)
      b.writeUInt32LE(v.numerrors, 20)
      break
    case "PCI":
      b.writeUInt32LE(v.counter, 16)
      break
    case "MPR":
      b.writeUInt32LE(v.sbepages, 16)
      b.writeUInt32LE(v.dbepages, 20)
      break
    case "THERMAL":
      b.writeUInt32LE(v.thermalViolation, 16)
      break
    case "POWER":
      b.writeUInt32LE(v.powerViolation, 16)
      break
    case "NVLINK":
      b.writeUInt16LE(v.fieldId, 16)
      b.writeUInt32LE(v.counter, 20)
      break
    case "XID":
      b.writeUInt32LE(v.errnum, 16)
      break
  }
  b.writeUInt32LE(v.gpuId, 24)
  return b
}

export interface PolicyDelivery {
  /** The record's timestamp (µs), which names it in the double's log. */
  readonly timestampUs: number
  /** Registrations the double delivered it to; undefined when the double did not log it within the wait. */
  readonly delivered: number | undefined
}

/** Why a violation could not be written: no FIFO, or no double reading it (the agent is not running). */
export class PolicyFifoUnavailable extends Error {}

const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

/**
 * Writes one violation into the double reading `fifo` and waits up to `waitMs` for its log line. Synchronous:
 * the FIFO is opened non-blocking, so a FIFO nobody reads fails at once (ENXIO) instead of hanging.
 */
export const writePolicyViolation = (
  fifo: string,
  v: PolicyFire,
  opts: { readonly timestampUs?: number; readonly waitMs?: number } = {}
): PolicyDelivery => {
  if (!existsSync(fifo))
    throw new PolicyFifoUnavailable(`${fifo} does not exist: no DCGM test double was started for this host`)
  // Unique per record: the log line is matched on it.
  const timestampUs = opts.timestampUs ?? Date.now() * 1000 + Math.floor(Math.random() * 1000)
  let fd: number
  try {
    fd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENXIO")
      throw new PolicyFifoUnavailable(`no DCGM test double is reading ${fifo} (is the node's agent running?)`)
    throw e
  }
  try {
    const record = encodePolicyResponse(v, timestampUs)
    if (writeSync(fd, record) !== record.length) throw new Error(`short write to ${fifo}`)
  } finally {
    closeSync(fd)
  }
  const log = `${fifo}.log`
  const end = Date.now() + (opts.waitMs ?? 3000)
  const tag = `ts=${timestampUs} `
  for (;;) {
    const line = existsSync(log)
      ? readFileSync(log, "utf8")
          .split("\n")
          .find((l) => l.startsWith(tag))
      : undefined
    if (line !== undefined)
      return { timestampUs, delivered: Number(/delivered=(-?\d+)/.exec(line)?.[1] ?? Number.NaN) }
    if (Date.now() > end) return { timestampUs, delivered: undefined }
    sleepSync(25)
  }
}
