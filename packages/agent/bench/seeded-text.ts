/**
 * Deterministic random text for the bench inputs: a xorshift32 generator from a fixed seed, and log templates filled
 * from it ({n} a number below 100000, {h} a 32-bit hex id, {x} a hex byte). Each input keeps its own seed, so its
 * lines stay the same from run to run.
 */
export interface SeededText {
  /** The next number in [0, 1). */
  readonly rng: () => number
  readonly pick: <T>(xs: readonly T[]) => T
  readonly fill: (template: string) => string
}

export const seededText = (seed: number): SeededText => {
  let s = seed
  const rng = () => {
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    return (s >>> 0) / 0x100000000
  }
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!
  const fill = (t: string) =>
    t
      .replace(/\{n\}/g, () => String(Math.floor(rng() * 100000)))
      .replace(/\{h\}/g, () => Math.floor(rng() * 0xffffffff).toString(16))
      .replace(/\{x\}/g, () =>
        Math.floor(rng() * 255)
          .toString(16)
          .padStart(2, "0")
      )
  return { rng, pick, fill }
}

/** The VPC CNI's ipamd.log messages when all is well (templates; none a detection). */
export const IPAMD_CHATTER = [
  "IP pool stats: Total IPs/Prefixes = {n}/0, AssignedIPs/CooldownIPs: {n}/0, c.maxIPsPerENI = 29",
  "Add/Update for Pod web-{h} on my node, namespace = default, IP = 10.0.{n}.{n}",
  "Received AddNetwork for NS /var/run/netns/cni-{h}, Sandbox {h}, ifname eth0",
  "Send AddNetworkReply: IPv4Addr: 10.0.{n}.{n}, DeviceNumber: 0, err: <nil>",
  "Successfully reconciled ENI eni-{h}"
]
