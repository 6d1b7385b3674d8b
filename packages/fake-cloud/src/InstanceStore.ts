/**
 * The fake's instances: an in-memory EC2 state machine (pending -> running -> shutting-down ->
 * terminated) with optional hooks that mirror each instance as a kwok Node. The store counts
 * effects (state transitions), so tests can prove that retries never terminate twice.
 */
import { randomBytes, randomUUID } from "node:crypto"
import { Ec2Error } from "./ec2/Ec2Error.ts"
import { ScheduledEventStore } from "./ec2/ScheduledEvents.ts"

export { Ec2Error }
import { defaultZones, type FakeZone, VPC_ID } from "./zones.ts"

export type InstanceStateName =
  | "pending"
  | "running"
  | "shutting-down"
  | "terminated"
  | "stopping"
  | "stopped"

export const STATE_CODE: Record<InstanceStateName, number> = {
  pending: 0,
  running: 16,
  "shutting-down": 32,
  terminated: 48,
  stopping: 64,
  stopped: 80
}

export interface LaunchTemplateRef {
  readonly id?: string
  readonly name?: string
  readonly version: string
}

/**
 * A fake-only knob: RunInstances with this tag boots its instances after that many ms instead of the store's
 * default, so the demo's fleet (running before the demo, in a real account) is up at once while its replacements
 * still take the realistic boot time. Real EC2 just keeps the tag.
 */
export const BOOT_DELAY_TAG = "fake-cloud:boot-delay-ms"
const bootDelayOf = (tags: Readonly<Record<string, string>> | undefined): number | undefined => {
  const v = tags?.[BOOT_DELAY_TAG]
  return v !== undefined && /^[0-9]{1,7}$/.test(v) ? Number(v) : undefined
}

/** The tags EC2 puts on an instance launched from a template. */
const launchTemplateTags = (lt: LaunchTemplateRef | undefined): Record<string, string> => ({
  ...(lt?.id ? { "aws:ec2launchtemplate:id": lt.id } : {}),
  ...(lt ? { "aws:ec2launchtemplate:version": lt.version } : {})
})

/** A Node condition an instance comes up with (a launch template marked broken: `markTemplateBroken`). */
export interface NodeFault {
  readonly type: string
  readonly status: string
  readonly reason: string
  readonly message: string
}

/** GPUs an instance comes up without (a launch template marked broken so): gone from its Node's capacity. */
export interface GpuLoss {
  readonly missingGpus: number
}

/** What a broken launch template's instances come up with. */
export type LaunchDefect = NodeFault | GpuLoss

const isGpuLoss = (d: LaunchDefect): d is GpuLoss => "missingGpus" in d

export interface FakeInstance {
  readonly instanceId: string
  readonly reservationId: string
  readonly imageId: string
  readonly instanceType: string
  readonly zone: FakeZone
  readonly privateIp: string
  readonly privateDnsName: string
  readonly launchTime: Date
  readonly tags: Record<string, string>
  readonly clientToken: string | undefined
  readonly launchTemplate: LaunchTemplateRef | undefined
  state: InstanceStateName
  /** Set when the instance mirrors an existing Node (adoption) or once its Node was created. */
  nodeName: string
  bootId: string
  stateReason?: string
  /** The fault its Node reports once Ready: its launch template was marked broken when it was launched. */
  readonly fault?: NodeFault
  /** GPUs it came up without: its launch template was marked broken so when it was launched. */
  readonly missingGpus?: number
}

export interface RunRequest {
  readonly count: number
  readonly imageId?: string | undefined
  readonly instanceType?: string | undefined
  readonly subnetId?: string | undefined
  readonly zoneName?: string | undefined
  readonly launchTemplate?: LaunchTemplateRef | undefined
  readonly clientToken?: string | undefined
  readonly tags: Record<string, string>
  /** Who asks: a RunInstances call (default) or an Auto Scaling group; counted apart in the stats. */
  readonly launchedBy?: LaunchSource
}

export type LaunchSource = "runInstances" | "autoScaling"

export interface AdoptRequest {
  readonly nodeName: string
  readonly instanceId?: string | undefined
  readonly instanceType?: string | undefined
  readonly zoneName?: string | undefined
  readonly tags?: Record<string, string> | undefined
  /** The template the adopted instance counts as launched from (EC2 then tags it `aws:ec2launchtemplate:*`). */
  readonly launchTemplate?: LaunchTemplateRef | undefined
}

/** What the store asks of the world outside memory (kwok Nodes). All optional. */
export interface NodeMirror {
  /** Creates the Node for a freshly booted instance. */
  readonly create: (instance: FakeInstance) => Promise<void>
  /** Deletes the Node of a terminated instance (absent Node is fine). */
  readonly delete: (instance: FakeInstance) => Promise<void>
  /** A reboot: the Node gets a new boot id. */
  readonly reboot: (instance: FakeInstance) => Promise<void>
  /** Reads an existing Node for adoption; providerID and labels fill in what the request leaves out. */
  readonly read: (nodeName: string) => Promise<AdoptRequest & { readonly providerID?: string | undefined }>
  /** Records the instance's providerID on an adopted Node that has none. */
  readonly setProviderId: (nodeName: string, providerID: string) => Promise<void>
}

export interface TerminateChange {
  readonly instance: FakeInstance
  readonly previous: InstanceStateName
  readonly current: InstanceStateName
}

export interface StoreOptions {
  readonly region: string
  readonly zones?: ReadonlyArray<FakeZone>
  /** pending -> running (and Node created) after this long. */
  readonly bootDelayMs?: number
  /** shutting-down -> terminated (and Node deleted) after this long. */
  readonly terminateDelayMs?: number
  readonly mirror?: NodeMirror
  readonly log?: (msg: string) => void
}

export interface StoreStats {
  /** Instances launched, by anyone. */
  readonly launches: number
  /** Of those, by RunInstances calls and by Auto Scaling groups. */
  readonly launchesBy: Record<LaunchSource, number>
  /** Per instance: how many times a TerminateInstances call actually started termination (0 or 1). */
  readonly terminationsStarted: Record<string, number>
  readonly reboots: Record<string, number>
}

const INSTANCE_ID = /^i-[0-9a-f]{8}(?:[0-9a-f]{9})?$/
const hex = (bytes: number) => randomBytes(bytes).toString("hex")

export class InstanceStore {
  readonly region: string
  readonly zones: ReadonlyArray<FakeZone>
  /** EC2's scheduled events of each instance (DescribeInstanceStatus), set through the admin API. */
  readonly events = new ScheduledEventStore()
  readonly #instances = new Map<string, FakeInstance>()
  /** Launch templates marked broken (by id): what their instances come up with. */
  readonly #brokenTemplates = new Map<string, LaunchDefect>()
  readonly #byClientToken = new Map<string, { reservationId: string; ids: string[]; fingerprint: string }>()
  readonly #timers = new Set<NodeJS.Timeout>()
  readonly #bootDelayMs: number
  readonly #terminateDelayMs: number
  readonly #mirror: NodeMirror | undefined
  readonly #log: (msg: string) => void
  #launches = 0
  readonly #launchesBy: Record<LaunchSource, number> = { runInstances: 0, autoScaling: 0 }
  readonly #terminationsStarted: Record<string, number> = {}
  readonly #reboots: Record<string, number> = {}
  readonly #usedIps = new Set<string>()

  constructor(options: StoreOptions) {
    this.region = options.region
    this.zones = options.zones ?? defaultZones(options.region)
    this.#bootDelayMs = options.bootDelayMs ?? 0
    this.#terminateDelayMs = options.terminateDelayMs ?? 0
    this.#mirror = options.mirror
    this.#log = options.log ?? (() => {})
  }

  get vpcId(): string {
    return VPC_ID
  }

  zoneByName(name: string): FakeZone | undefined {
    return this.zones.find((z) => z.name === name)
  }

  /** RunInstances. The same ClientToken returns the same reservation (EC2 idempotency). */
  run(req: RunRequest): { reservationId: string; instances: FakeInstance[] } {
    const fingerprint = JSON.stringify([
      req.count,
      req.imageId,
      req.instanceType,
      req.subnetId,
      req.launchTemplate
    ])
    if (req.clientToken) {
      const prior = this.#byClientToken.get(req.clientToken)
      if (prior) {
        if (prior.fingerprint !== fingerprint) {
          throw new Ec2Error(
            "IdempotentParameterMismatch",
            "The client token you have provided is associated with a resource that is already deleted or has different parameters."
          )
        }
        return {
          reservationId: prior.reservationId,
          instances: prior.ids.map((id) => this.#instances.get(id)!)
        }
      }
    }
    let zone: FakeZone | undefined
    if (req.subnetId) {
      zone = this.zones.find((z) => z.subnetId === req.subnetId)
      if (!zone)
        throw new Ec2Error("InvalidSubnetID.NotFound", `The subnet ID '${req.subnetId}' does not exist`)
      if (req.zoneName && req.zoneName !== zone.name) {
        throw new Ec2Error(
          "InvalidParameterCombination",
          `The subnet '${req.subnetId}' is in ${zone.name}, not in the requested zone ${req.zoneName}`
        )
      }
    } else if (req.zoneName) {
      zone = this.zoneByName(req.zoneName)
      if (!zone) {
        throw new Ec2Error("InvalidParameterValue", `Invalid availability zone: [${req.zoneName}]`)
      }
    } else {
      zone = this.zones[0]!
    }
    if (!req.instanceType && !req.launchTemplate) {
      throw new Ec2Error("MissingParameter", "The request must contain the parameter InstanceType")
    }
    if (!req.imageId && !req.launchTemplate) {
      throw new Ec2Error("MissingParameter", "The request must contain the parameter ImageId")
    }
    if (req.count < 1 || req.count > 50) {
      throw new Ec2Error("InvalidParameterValue", `Value (${req.count}) for parameter MinCount is invalid.`)
    }
    const reservationId = `r-${hex(8).slice(0, 17)}`
    const instances: FakeInstance[] = []
    for (let i = 0; i < req.count; i++) {
      const ip = this.#allocateIp(zone)
      const instance: FakeInstance = {
        instanceId: `i-${hex(9).slice(0, 17)}`,
        reservationId,
        imageId: req.imageId ?? "ami-0fake0launchtmpl0",
        instanceType: req.instanceType ?? "m5.large",
        zone,
        privateIp: ip,
        privateDnsName: `ip-${ip.replace(/\./g, "-")}.${this.region}.compute.internal`,
        launchTime: new Date(),
        tags: {
          ...req.tags,
          ...launchTemplateTags(req.launchTemplate)
        },
        clientToken: req.clientToken,
        launchTemplate: req.launchTemplate,
        state: "pending",
        nodeName: `ip-${ip.replace(/\./g, "-")}.${this.region}.compute.internal`,
        bootId: randomUUID(),
        ...this.#faultOf(req.launchTemplate)
      }
      this.#instances.set(instance.instanceId, instance)
      instances.push(instance)
      this.#launches++
      this.#launchesBy[req.launchedBy ?? "runInstances"]++
      this.#after(bootDelayOf(req.tags) ?? this.#bootDelayMs, () => this.#boot(instance))
    }
    if (req.clientToken) {
      this.#byClientToken.set(req.clientToken, {
        reservationId,
        ids: instances.map((i) => i.instanceId),
        fingerprint
      })
    }
    return { reservationId, instances }
  }

  /**
   * Marks a launch template broken: every instance launched from it from now on (RunInstances, an Auto Scaling
   * group) comes up Ready and then reports `fault` on its Node, as a bad image or user data would, or comes up
   * with `missingGpus` fewer GPUs than its type has. `undefined` mends it (instances already up keep their fault).
   */
  markTemplateBroken(templateId: string, fault: LaunchDefect | undefined): void {
    if (fault === undefined) this.#brokenTemplates.delete(templateId)
    else this.#brokenTemplates.set(templateId, fault)
  }

  brokenTemplates(): Record<string, LaunchDefect> {
    return Object.fromEntries(this.#brokenTemplates)
  }

  #faultOf(lt: LaunchTemplateRef | undefined): { fault?: NodeFault; missingGpus?: number } {
    const defect = lt?.id !== undefined ? this.#brokenTemplates.get(lt.id) : undefined
    if (defect === undefined) return {}
    return isGpuLoss(defect) ? { missingGpus: defect.missingGpus } : { fault: defect }
  }

  /** Instances by id; unknown ids fail the whole call like EC2 does. No ids: every instance. */
  describe(ids: ReadonlyArray<string>): FakeInstance[] {
    if (ids.length === 0) return [...this.#instances.values()]
    this.#validateIds(ids)
    const missing = ids.filter((id) => !this.#instances.has(id))
    if (missing.length > 0) {
      throw new Ec2Error(
        "InvalidInstanceID.NotFound",
        `The instance IDs '${missing.join(", ")}' do not exist`
      )
    }
    return ids.map((id) => this.#instances.get(id)!)
  }

  /** TerminateInstances: idempotent; only a live instance changes state (and counts as an effect). */
  terminate(ids: ReadonlyArray<string>): TerminateChange[] {
    const instances = this.describe(ids)
    return instances.map((instance) => {
      const previous = instance.state
      if (
        previous === "pending" ||
        previous === "running" ||
        previous === "stopping" ||
        previous === "stopped"
      ) {
        instance.state = "shutting-down"
        instance.stateReason = "Client.UserInitiatedShutdown: User initiated shutdown"
        this.#terminationsStarted[instance.instanceId] =
          (this.#terminationsStarted[instance.instanceId] ?? 0) + 1
        this.#after(this.#terminateDelayMs, () => this.#finishTermination(instance))
      }
      return { instance, previous, current: instance.state }
    })
  }

  reboot(ids: ReadonlyArray<string>): void {
    const instances = this.describe(ids)
    for (const i of instances) {
      if (i.state !== "running") {
        throw new Ec2Error(
          "IncorrectState",
          `The instance '${i.instanceId}' is not in a state from which it can be rebooted.`
        )
      }
    }
    for (const i of instances) {
      i.bootId = randomUUID()
      this.#reboots[i.instanceId] = (this.#reboots[i.instanceId] ?? 0) + 1
      const mirror = this.#mirror
      if (mirror)
        this.#background(
          `reboot ${i.instanceId}`,
          () => mirror.reboot(i),
          () => {}
        )
    }
  }

  /** Registers an existing Node as a running instance (the demo's "adoption" path). */
  async adopt(req: AdoptRequest): Promise<FakeInstance> {
    const node = this.#mirror ? await this.#mirror.read(req.nodeName) : undefined
    const fromProviderId = /^aws:\/\/\/([^/]+)\/(i-[0-9a-f]+)$/.exec(node?.providerID ?? "")
    const instanceId = req.instanceId ?? fromProviderId?.[2] ?? `i-${hex(9).slice(0, 17)}`
    if (this.#instances.has(instanceId)) return this.#instances.get(instanceId)!
    const zoneName = req.zoneName ?? node?.zoneName ?? fromProviderId?.[1] ?? this.zones[0]!.name
    const zone = this.zoneByName(zoneName)
    if (!zone) throw new Ec2Error("InvalidParameterValue", `Invalid availability zone: [${zoneName}]`)
    const ip = this.#allocateIp(zone)
    const launchTemplate = req.launchTemplate ?? node?.launchTemplate
    const instance: FakeInstance = {
      instanceId,
      reservationId: `r-${hex(9).slice(0, 17)}`,
      imageId: "ami-0fake0adopted00000",
      instanceType: req.instanceType ?? node?.instanceType ?? "m5.large",
      zone,
      privateIp: ip,
      // The Node registered under this name, as a kubelet registers under its instance's private DNS name.
      privateDnsName: req.nodeName,
      launchTime: new Date(),
      tags: { ...node?.tags, ...req.tags, ...launchTemplateTags(launchTemplate) },
      clientToken: undefined,
      launchTemplate,
      state: "running",
      nodeName: req.nodeName,
      bootId: randomUUID()
    }
    this.#instances.set(instanceId, instance)
    if (this.#mirror && !node?.providerID) {
      await this.#mirror.setProviderId(req.nodeName, `aws:///${zone.name}/${instanceId}`)
    }
    return instance
  }

  stats(): StoreStats {
    return {
      launches: this.#launches,
      launchesBy: { ...this.#launchesBy },
      terminationsStarted: { ...this.#terminationsStarted },
      reboots: { ...this.#reboots }
    }
  }

  /** Stops pending timers (server shutdown). */
  close(): void {
    for (const t of this.#timers) clearTimeout(t)
    this.#timers.clear()
  }

  /**
   * A random free address in the zone's /16. Random, not sequential, so Node names (which are derived
   * from it, as on EKS) do not repeat across fake-cloud runs against the same cluster.
   */
  #allocateIp(zone: FakeZone): string {
    for (;;) {
      const [a, b] = randomBytes(2)
      const ip = `${zone.cidrPrefix}.${a!}.${(b! % 250) + 4}`
      if (!this.#usedIps.has(ip)) {
        this.#usedIps.add(ip)
        return ip
      }
    }
  }

  #validateIds(ids: ReadonlyArray<string>): void {
    const bad = ids.find((id) => !INSTANCE_ID.test(id))
    if (bad !== undefined) {
      throw new Ec2Error("InvalidInstanceID.Malformed", `Invalid id: "${bad}" (expecting "i-...")`)
    }
  }

  #boot(instance: FakeInstance): void {
    if (instance.state !== "pending") return
    const done = () => {
      if (instance.state === "pending") instance.state = "running"
    }
    const mirror = this.#mirror
    if (!mirror) {
      done()
      return
    }
    this.#background(`create node for ${instance.instanceId}`, () => mirror.create(instance), done)
  }

  #finishTermination(instance: FakeInstance): void {
    const done = () => {
      instance.state = "terminated"
      instance.stateReason = "Client.UserInitiatedShutdown: User initiated shutdown"
    }
    const mirror = this.#mirror
    if (!mirror) {
      done()
      return
    }
    this.#background(`delete node of ${instance.instanceId}`, () => mirror.delete(instance), done)
  }

  #after(ms: number, f: () => void): void {
    const t = setTimeout(() => {
      this.#timers.delete(t)
      f()
    }, ms)
    this.#timers.add(t)
  }

  /** Runs a Node side effect; on failure logs and tries again every second (up to 30 times). */
  #background(what: string, effect: () => Promise<void>, onDone: () => void, attempt = 1): void {
    effect().then(onDone, (e: unknown) => {
      this.#log(`${what} failed (attempt ${attempt}): ${e instanceof Error ? e.message : String(e)}`)
      if (attempt < 30) this.#after(1000, () => this.#background(what, effect, onDone, attempt + 1))
    })
  }
}
