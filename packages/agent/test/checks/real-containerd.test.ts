/**
 * The agent's CRI client and its container-runtime checks against a REAL containerd (issue #27 part 4): until
 * now the hand-written gRPC/HTTP2 transport and protobuf codec (src/cri) were tested only against a double that
 * imports the same codec (test/cri/fake-containerd.ts), so a bug shared by both would hide.
 *
 * The test starts a private containerd (its own root, state and config in a temp dir, its socket at
 * `<host root>/run/containerd/containerd.sock` of a throwaway host root, so the production registry's CRI client
 * finds it where it finds the node's), configured like the real node's (tools/cluster/realnode.mjs: overlayfs,
 * runc, restrict_oom_score_adj) but with no CNI network config. What containerd answers is checked against
 * what containerd says through another path where one exists: `ctr version`, `ctr containers ls`, the
 * JSON of its own config. Pod sandboxes use the host network and a static C pause binary packed here into an
 * OCI archive (no registry is reachable); their 4 KiB annotations make ListPodSandbox answer over 16 KiB, so
 * the response spans several HTTP/2 DATA frames (16 KiB is the client's SETTINGS_MAX_FRAME_SIZE), which the
 * double never sends. Last, a CNI config (bridge + host-local) turns NetworkReady true and a pod-network sandbox
 * gets an address, which ipamd-state compares with an IPAMD checkpoint; containerd runs in a network namespace
 * of its own (unshare), so the bridge and the ip_forward the bridge plugin sets never touch the host's.
 *
 * Skipped, with the reason in the name, when not root or containerd/ctr/runc are missing (tools/prereqs.mjs
 * phase `runtimeTest`); the sandbox tests also when `cc -static` cannot build the pause binary, the CNI tests
 * when unshare or the CNI plugins (containernetworking-plugins, the realnode phase's) are missing.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Logger, Result } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CommandRunner, commandRunnerLayer } from "../../src/checks/command-runner.ts"
import { buildChecks } from "../../src/checks/registry.ts"
import { decodeConfig } from "../../src/config/load.ts"
import { type GrpcConnection, GrpcStatusError, withGrpcConnection } from "../../src/cri/grpc-unix.ts"
import { SANDBOX_NOTREADY, SANDBOX_READY } from "../../src/cri/pod-sandbox-status.ts"
import { asBytes, asString, asVarint, ProtoWriter, readFields } from "../../src/cri/protobuf.ts"
import { CONTAINERD_SOCKET, criRuntimeClient } from "../../src/cri/runtime-client.ts"
import type { Finding } from "../../src/model.ts"
import type { PeriodicCheck } from "../../src/scheduler/periodic-check.ts"
import { type HostRoot, makeHostRoot } from "./host-root.ts"
import { hasCommand } from "./namespace.ts"

const missing = ["containerd", "ctr", "runc"].filter((c) => !hasCommand(c))
const WHY: string | undefined =
  process.platform !== "linux" || process.getuid?.() !== 0
    ? "needs root on Linux (containerd)"
    : missing.length > 0
      ? `not on PATH: ${missing.join(", ")} (apt-get install containerd runc)`
      : undefined

const work = WHY === undefined ? mkdtempSync(join(tmpdir(), "nodemend-containerd-")) : ""
const PAUSE_C = `#include <signal.h>
#include <unistd.h>
static void bye(int s) { (void)s; _exit(0); }
int main(void) { signal(SIGTERM, bye); signal(SIGINT, bye); for (;;) pause(); }
`
/** A static pause binary for the sandbox image (a pod sandbox runs it); undefined with the reason it cannot. */
const pauseBinary = (): { path?: string; why?: string } => {
  if (WHY !== undefined) return { why: WHY }
  if (!hasCommand("cc")) return { why: "no cc to build the pause binary" }
  writeFileSync(join(work, "pause.c"), PAUSE_C)
  const r = spawnSync("cc", ["-static", "-Os", "-o", join(work, "pause"), join(work, "pause.c")], {
    stdio: "ignore"
  })
  return r.status === 0 ? { path: join(work, "pause") } : { why: "cc -static fails (no libc.a: libc6-dev)" }
}
const PAUSE = pauseBinary()
const PAUSE_IMAGE = "localhost/nodemend-test/pause:1"
/**
 * Host paths containerd 1.6 and libcni write whatever the config says (real-node.md): the shims' sockets under
 * /run/containerd/s, CNI result caches under /var/lib/cni/results. Removed afterwards only if this run made them
 * and they are empty (a real node's containerd may be using them).
 */
const HOST_DIRS = ["/run/containerd/s", "/run/containerd", "/var/lib/cni/results", "/var/lib/cni"].filter(
  (d) => !existsSync(d)
)
const OWN_NETNS = WHY === undefined && hasCommand("unshare") && hasCommand("ip")
const CNI_PLUGINS = ["bridge", "host-local", "loopback"].filter((p) => !existsSync(join("/usr/lib/cni", p)))
const CNI_WHY: string | undefined = !OWN_NETNS
  ? "no unshare/ip for a network namespace of containerd's own"
  : CNI_PLUGINS.length > 0
    ? `no CNI ${CNI_PLUGINS.join(", ")} in /usr/lib/cni (containernetworking-plugins)`
    : undefined
const POD_SUBNET = "10.231.0.0/24"
/** A cgroup parent of this run's own, removed afterwards in every hierarchy. */
const CGROUP_PARENT = `/nodemend-cri-test-${process.pid}`

const RUNTIME = "/runtime.v1.RuntimeService"
const msg = () => new ProtoWriter()
const fields = (b: Uint8Array) => readFields(b)
const str = (b: Uint8Array, field: number): string => {
  const f = fields(b).find((x) => x.field === field)
  return f === undefined ? "" : asString(f)
}
const mapEntries = (b: Uint8Array, field: number): Map<string, string> =>
  new Map(
    fields(b)
      .filter((f) => f.field === field)
      .map((f) => [str(asBytes(f), 1), str(asBytes(f), 2)])
  )

let host: HostRoot
let sock: string
let containerd: ChildProcess | undefined
let exited: Promise<void> = Promise.resolve()

const call = <A>(use: (conn: GrpcConnection) => Effect.Effect<A, unknown>, timeoutMs = 10_000): Promise<A> =>
  Effect.runPromise(withGrpcConnection(sock, timeoutMs, use))
const unary = (method: string, request: Uint8Array = new Uint8Array()) =>
  call((c) => c.unary(method, request), 30_000)
const ctr = (...args: string[]) =>
  execFileSync("ctr", ["--address", sock, "--namespace", "k8s.io", ...args], { encoding: "utf8" })

/** What a check returns in one run, with the warnings it logged. */
const runCheck = async (check: PeriodicCheck, nowMs = Date.now()) => {
  const warnings: string[] = []
  const capture = Logger.make(({ logLevel, message }) => {
    if (logLevel === "Warn") warnings.push(JSON.stringify(message))
  })
  const findings: readonly Finding[] = await Effect.runPromise(
    check.run({ nowMs, pids: host.files.pids }).pipe(Effect.provide(Logger.layer([capture])))
  )
  return { findings, warnings }
}

/** A check as the production registry builds it, over the host root, the real CommandRunner and CRI socket. */
const productionCheck = async (name: string): Promise<PeriodicCheck> => {
  const config = decodeConfig({})
  if (Result.isFailure(config)) throw new Error(config.failure.message)
  const runner = await Effect.runPromise(
    Effect.service(CommandRunner).pipe(Effect.provide(commandRunnerLayer("/")))
  )
  const check = buildChecks(config.success, host.files, runner).find((c) => c.name === name)
  if (check === undefined) throw new Error(`no check ${name}`)
  return check
}

const sha256 = (b: Buffer | string) => createHash("sha256").update(b).digest("hex")

/** An OCI archive of a one-layer image running /pause, imported into containerd's k8s.io namespace. */
const importPauseImage = (pause: string) => {
  const dir = join(work, "image")
  const blobs = join(dir, "layout", "blobs", "sha256")
  mkdirSync(join(dir, "rootfs"), { recursive: true })
  mkdirSync(blobs, { recursive: true })
  execFileSync("cp", [pause, join(dir, "rootfs", "pause")])
  execFileSync("tar", [
    "--owner=0",
    "--group=0",
    "--numeric-owner",
    "--mtime=@0",
    "-C",
    join(dir, "rootfs"),
    "-cf",
    join(dir, "layer.tar"),
    "pause"
  ])
  execFileSync("gzip", ["-n", "-k", join(dir, "layer.tar")])
  const blob = (content: Buffer | string) => {
    const digest = sha256(content)
    writeFileSync(join(blobs, digest), content)
    return { digest: `sha256:${digest}`, size: Buffer.byteLength(content) }
  }
  const layerTar = execFileSync("cat", [join(dir, "layer.tar")])
  const layer = blob(execFileSync("cat", [join(dir, "layer.tar.gz")]))
  const config = blob(
    JSON.stringify({
      architecture: "amd64",
      os: "linux",
      config: { Entrypoint: ["/pause"] },
      rootfs: { type: "layers", diff_ids: [`sha256:${sha256(layerTar)}`] }
    })
  )
  const manifest = blob(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: { mediaType: "application/vnd.oci.image.config.v1+json", ...config },
      layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", ...layer }]
    })
  )
  writeFileSync(
    join(dir, "layout", "index.json"),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [
        {
          mediaType: "application/vnd.oci.image.manifest.v1+json",
          ...manifest,
          annotations: { "io.containerd.image.name": PAUSE_IMAGE, "org.opencontainers.image.ref.name": "1" }
        }
      ]
    })
  )
  writeFileSync(join(dir, "layout", "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }))
  execFileSync("tar", ["-C", join(dir, "layout"), "-cf", join(dir, "pause-oci.tar"), "."])
  ctr("images", "import", join(dir, "pause-oci.tar"))
}

const containerdConfig = (d: string) => `version = 2
root = "${join(d, "root")}"
state = "${join(d, "state")}"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "${sock}"
[ttrpc]
  address = "${sock}.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "${join(d, "opt")}"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${PAUSE_IMAGE}"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "${execFileSync("sh", ["-c", "command -v runc"], { encoding: "utf8" }).trim()}"
        Root = "${join(d, "runc")}"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${join(d, "cni", "net.d")}"
`

const listSandboxIds = async (): Promise<string[]> =>
  fields(await unary(`${RUNTIME}/ListPodSandbox`)).map((f) => str(asBytes(f), 1))

describe.skipIf(WHY !== undefined)(
  `the CRI client against a real containerd${WHY ? ` (skipped: ${WHY})` : ""}`,
  () => {
    beforeAll(async () => {
      host = makeHostRoot()
      sock = join(host.root, CONTAINERD_SOCKET)
      mkdirSync(join(host.root, "run", "containerd"), { recursive: true })
      writeFileSync(join(work, "config.toml"), containerdConfig(work))
      const log = join(work, "containerd.log")
      // In a network namespace of its own (when unshare can make one): the CNI bridge, its addresses and the
      // ip_forward the bridge plugin turns on stay out of the host's.
      const script = `${OWN_NETNS ? "ip link set lo up && " : ""}exec containerd --config "$1" >"$2" 2>&1`
      containerd = spawn(
        OWN_NETNS ? "unshare" : "sh",
        [...(OWN_NETNS ? ["--net", "sh"] : []), "-c", script, "sh", join(work, "config.toml"), log],
        {
          stdio: "ignore"
        }
      )
      const child = containerd
      exited = new Promise((resolve) => child.once("exit", () => resolve()))
      for (let i = 0; i < 300 && !existsSync(sock); i++) await new Promise((r) => setTimeout(r, 100))
      if (!existsSync(sock)) throw new Error(`containerd did not open ${sock} in 30 s (log: ${log})`)
    })

    afterAll(async () => {
      if (containerd?.exitCode === null) {
        // Sandboxes first: their shims would outlive containerd.
        try {
          for (const id of await listSandboxIds()) {
            await unary(`${RUNTIME}/StopPodSandbox`, msg().string(1, id).finish())
            await unary(`${RUNTIME}/RemovePodSandbox`, msg().string(1, id).finish())
          }
        } catch {
          // reported by the tests themselves
        }
        containerd.kill("SIGTERM")
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))])
      }
      // cgroup v1: one per hierarchy; v2: the unified one at the top
      for (const h of ["", ...(existsSync("/sys/fs/cgroup") ? readdirSync("/sys/fs/cgroup") : [])]) {
        try {
          rmdirSync(join("/sys/fs/cgroup", h, CGROUP_PARENT))
        } catch {
          // not created in this hierarchy, or a co-mounted one already removed
        }
      }
      for (const d of HOST_DIRS) {
        try {
          rmdirSync(d)
        } catch {
          // not empty: in use
        }
      }
      host?.cleanup()
      rmSync(work, { recursive: true, force: true })
    })

    it("Version: containerd names itself and its version as `ctr version` does, CRI API v1", async () => {
      const v = await unary(`${RUNTIME}/Version`, msg().string(1, "v1").finish())
      const server = /Server:\s*\n\s*Version:\s*(\S+)/.exec(ctr("version"))?.[1]
      expect({
        version: str(v, 1),
        runtimeName: str(v, 2),
        runtimeVersion: str(v, 3),
        runtimeApiVersion: str(v, 4)
      }).toEqual({
        version: "0.1.0",
        runtimeName: "containerd",
        runtimeVersion: server,
        runtimeApiVersion: "v1"
      })
      console.info(`real containerd: ${str(v, 2)} ${str(v, 3)}, CRI ${str(v, 4)}`)
    })

    it("the CRI versions it serves: v1 always; v1alpha2 only before containerd 2.0; an unknown service is UNIMPLEMENTED", async () => {
      const server = /Server:\s*\n\s*Version:\s*v?(\d+)\./.exec(ctr("version"))?.[1]
      const alpha = await Effect.runPromise(
        withGrpcConnection(sock, 10_000, (c) =>
          c.unary("/runtime.v1alpha2.RuntimeService/Version", msg().string(1, "v1alpha2").finish())
        ).pipe(Effect.result)
      )
      if (Number(server) < 2) {
        expect(Result.isSuccess(alpha)).toBe(true)
        if (Result.isSuccess(alpha)) expect(str(alpha.success, 4)).toBe("v1alpha2")
      } else expect(alpha).toMatchObject({ failure: { _tag: "GrpcStatusError", code: 12 } })
      // A trailers-only answer (grpc-status in the HEADERS frame, no body): a typed status error.
      const unknown = await Effect.runPromise(
        withGrpcConnection(sock, 10_000, (c) =>
          c.unary("/runtime.v9.RuntimeService/Version", new Uint8Array())
        ).pipe(Effect.flip)
      )
      expect(unknown).toBeInstanceOf(GrpcStatusError)
      expect(unknown).toMatchObject({ code: 12 })
    })

    it("Status: RuntimeReady true; NetworkReady false with containerd's reason (no CNI config here)", async () => {
      const s = await unary(`${RUNTIME}/Status`)
      const status = fields(s).find((f) => f.field === 1)
      const conditions = fields(asBytes(status!))
        .filter((f) => f.field === 1)
        .map((f) => {
          const c = asBytes(f)
          const flag = fields(c).find((x) => x.field === 2)
          return {
            type: str(c, 1),
            status: flag === undefined ? false : asVarint(flag) === 1n,
            reason: str(c, 3),
            message: str(c, 4)
          }
        })
      expect(conditions).toEqual([
        { type: "RuntimeReady", status: true, reason: "", message: "" },
        {
          type: "NetworkReady",
          status: false,
          reason: "NetworkPluginNotReady",
          message: expect.stringContaining("cni plugin not initialized")
        }
      ])
      // verbose: containerd's own view in an info map; its config is JSON that must agree with what we started it with
      const info = mapEntries(await unary(`${RUNTIME}/Status`, msg().bool(1, true).finish()), 2)
      expect([...info.keys()]).toEqual(expect.arrayContaining(["config", "cniconfig", "golang"]))
      const config = JSON.parse(info.get("config")!)
      expect(config).toMatchObject({
        sandboxImage: PAUSE_IMAGE,
        restrictOOMScoreAdj: true,
        containerd: { snapshotter: "overlayfs", defaultRuntimeName: "runc" }
      })
    })

    it("ListPodSandbox and ListContainers on a fresh containerd: empty messages (a 5-byte gRPC frame)", async () => {
      expect((await unary(`${RUNTIME}/ListPodSandbox`)).length).toBe(0)
      expect((await unary(`${RUNTIME}/ListContainers`)).length).toBe(0)
      expect(ctr("containers", "ls", "-q").trim()).toBe("")
    })

    it("the agent's client: unknown sandboxes are NOT_FOUND answers (undefined), 20 calls on one connection", async () => {
      const ids = Array.from({ length: 20 }, (_, i) => `${"0".repeat(62)}${String(i).padStart(2, "0")}`)
      const answers = await Effect.runPromise(criRuntimeClient(sock).podSandboxStatuses(ids))
      expect([...answers.keys()]).toEqual(ids)
      expect([...answers.values()].every((s) => s === undefined)).toBe(true)
    })

    it("runtime-health, built by the production registry: the agent's Status decoding agrees with the raw fields, the probe passes, no finding", async () => {
      const conditions = await Effect.runPromise(criRuntimeClient(sock).probe())
      expect(conditions.map((c) => [c.type, c.status])).toEqual([
        ["RuntimeReady", true],
        ["NetworkReady", false]
      ])
      expect(conditions[1]?.reason).toBe("NetworkPluginNotReady")
      const check = await productionCheck("runtime-health")
      for (let i = 0; i < 3; i++) {
        const { findings, warnings } = await runCheck(check, Date.now() + i * 60_000)
        expect(findings).toEqual([])
        expect(warnings).toEqual([])
      }
    })

    it("containerd-deprecations, production runner and real ctr: on containerd < 2.0 ctr has no `deprecations`, so the check logs and reports nothing", async () => {
      const check = await productionCheck("containerd-deprecations")
      const before = process.env.CONTAINERD_ADDRESS
      process.env.CONTAINERD_ADDRESS = sock
      try {
        const { findings, warnings } = await runCheck(check)
        expect(findings).toEqual([])
        const help = spawnSync("ctr", ["deprecations", "list", "--format", "json"], { encoding: "utf8" })
        if (help.status === 0) expect(warnings).toEqual([])
        else expect(warnings.join("\n")).toContain("ctr deprecations list failed")
      } finally {
        if (before === undefined) delete process.env.CONTAINERD_ADDRESS
        else process.env.CONTAINERD_ADDRESS = before
      }
    })

    describe.skipIf(PAUSE.path === undefined)(
      `with pod sandboxes (host network)${PAUSE.why && WHY === undefined ? ` (skipped: ${PAUSE.why})` : ""}`,
      () => {
        const SANDBOXES = 6
        const PAD = "x".repeat(4096)
        let ids: string[] = []
        let startedNs = 0n
        let endedNs = 0n

        beforeAll(async () => {
          importPauseImage(PAUSE.path!)
          const config = (i: number) =>
            msg()
              .message(1, msg().string(1, `p${i}`).string(2, `uid-${i}`).string(3, "nodemend-test").finish())
              .message(7, msg().string(1, "nodemend.io/pad").string(2, PAD).finish())
              .message(
                8,
                msg()
                  .string(1, CGROUP_PARENT)
                  // NamespaceOption{network: NODE}: no CNI needed (and no hostname: no UTS namespace of its own)
                  .message(2, msg().message(1, msg().int(1, 2).finish()).finish())
                  .finish()
              )
              .finish()
          startedNs = BigInt(Date.now()) * 1_000_000n
          ids = []
          for (let i = 0; i < SANDBOXES; i++)
            ids.push(str(await unary(`${RUNTIME}/RunPodSandbox`, msg().message(1, config(i)).finish()), 1))
          endedNs = BigInt(Date.now()) * 1_000_000n
        }, 60_000)

        it("ListPodSandbox over 16 KiB (several DATA frames) decodes every sandbox, as `ctr containers ls` lists them", async () => {
          const body = await unary(`${RUNTIME}/ListPodSandbox`)
          expect(body.length).toBeGreaterThan(SANDBOXES * PAD.length)
          expect(body.length).toBeGreaterThan(16_384)
          const items = fields(body).map((f) => asBytes(f))
          expect(items.map((b) => str(b, 1)).sort()).toEqual([...ids].sort())
          // PodSandbox.annotations is field 6 (PodSandboxConfig.annotations, sent above, is 7)
          for (const b of items) expect(mapEntries(b, 6).get("nodemend.io/pad") === PAD).toBe(true)
          expect(ctr("containers", "ls", "-q").trim().split("\n").sort()).toEqual([...ids].sort())
          // No containers in them, only the sandboxes' pause processes.
          expect((await unary(`${RUNTIME}/ListContainers`)).length).toBe(0)
        })

        it("the agent's PodSandboxStatus decoding: id, metadata, READY, creation time, no IP on the host network", async () => {
          const answers = await Effect.runPromise(criRuntimeClient(sock).podSandboxStatuses(ids))
          ids.forEach((id, i) => {
            const s = answers.get(id)
            expect(s).toMatchObject({
              id,
              metadata: { name: `p${i}`, uid: `uid-${i}`, namespace: "nodemend-test", attempt: 0 },
              state: SANDBOX_READY,
              network: { ip: "", additionalIps: [] }
            })
            expect(s!.createdAt >= startedNs - 1_000_000_000n && s!.createdAt <= endedNs).toBe(true)
          })
        })

        it("ipamd-state, built by the production registry on the host root: finds the runtime at <root>/run/containerd, reads the sandboxes, no finding for sandboxes without an IP", async () => {
          host.mkdir("var/log/pods/kube-system_aws-node-x1_0f0f/aws-vpc-cni-init")
          host.write("proc/77/comm", "aws-k8s-agent\n")
          host.write(
            "var/run/aws-node/ipam.json",
            JSON.stringify({
              version: "vpc-cni-ipam/1",
              allocations: [
                ...ids.map((id, i) => ({
                  networkName: "aws-cni",
                  containerID: id,
                  ifName: "eth0",
                  ipv4: `10.0.1.${i + 5}`,
                  metadata: { k8sPodNamespace: "nodemend-test", k8sPodName: `p${i}` }
                })),
                { networkName: "aws-cni", containerID: "f".repeat(64), ifName: "eth0", ipv4: "10.0.1.99" }
              ]
            })
          )
          const { findings, warnings } = await runCheck(await productionCheck("ipamd-state"))
          expect(findings).toEqual([])
          expect(warnings).toEqual([]) // it reached containerd: an unreachable runtime logs a warning
        })

        it("a stopped sandbox reads NOTREADY; a removed one is NOT_FOUND (undefined)", async () => {
          const [stopped, removed] = ids
          await unary(`${RUNTIME}/StopPodSandbox`, msg().string(1, stopped!).finish())
          await unary(`${RUNTIME}/StopPodSandbox`, msg().string(1, removed!).finish())
          await unary(`${RUNTIME}/RemovePodSandbox`, msg().string(1, removed!).finish())
          const answers = await Effect.runPromise(
            criRuntimeClient(sock).podSandboxStatuses([stopped!, removed!])
          )
          expect(answers.get(stopped!)?.state).toBe(SANDBOX_NOTREADY)
          expect(answers.has(removed!)).toBe(true)
          expect(answers.get(removed!)).toBeUndefined()
        })
      }
    )

    describe.skipIf(PAUSE.path === undefined || CNI_WHY !== undefined)(
      `with a CNI network (bridge + host-local, in containerd's network namespace)${CNI_WHY && PAUSE.path ? ` (skipped: ${CNI_WHY})` : ""}`,
      () => {
        let id = ""
        const networkReady = async () => {
          const status = fields(await unary(`${RUNTIME}/Status`)).find((f) => f.field === 1)
          for (const f of fields(asBytes(status!)).filter((x) => x.field === 1)) {
            const flag = fields(asBytes(f)).find((x) => x.field === 2)
            if (str(asBytes(f), 1) === "NetworkReady") return flag !== undefined && asVarint(flag) === 1n
          }
          return false
        }

        beforeAll(async () => {
          mkdirSync(join(work, "cni", "net.d"), { recursive: true })
          writeFileSync(
            join(work, "cni", "net.d", "10-test.conflist"),
            JSON.stringify({
              cniVersion: "1.0.0",
              name: "nodemend-test",
              plugins: [
                {
                  type: "bridge",
                  bridge: "nmtest0",
                  isGateway: true,
                  ipMasq: false,
                  ipam: {
                    type: "host-local",
                    ranges: [[{ subnet: POD_SUBNET }]],
                    dataDir: join(work, "cni", "ipam")
                  }
                }
              ]
            })
          )
          // containerd watches its CNI config directory
          for (let i = 0; i < 100 && !(await networkReady()); i++)
            await new Promise((r) => setTimeout(r, 100))
          const config = msg()
            .message(1, msg().string(1, "p-net").string(2, "uid-net").string(3, "nodemend-test").finish())
            .string(2, "p-net")
            .message(8, msg().string(1, CGROUP_PARENT).finish())
            .finish()
          id = str(await unary(`${RUNTIME}/RunPodSandbox`, msg().message(1, config).finish()), 1)
        }, 60_000)

        it("Status: NetworkReady turns true once a CNI config is there", async () => {
          expect(await networkReady()).toBe(true)
        })

        it("PodSandboxStatus reports the address host-local gave the sandbox; ipamd-state flags an allocation the runtime does not report", async () => {
          const status = (await Effect.runPromise(criRuntimeClient(sock).podSandboxStatuses([id]))).get(id)
          // host-local records each address it hands out as a file named by the address holding the sandbox id
          const leased = readdirSync(join(work, "cni", "ipam", "nodemend-test")).filter((f) =>
            f.startsWith("10.231.0.")
          )
          expect(leased).toHaveLength(1)
          expect(status?.network).toEqual({ ip: leased[0], additionalIps: [] })
          const checkpoint = (ipv4: string) =>
            host.write(
              "var/run/aws-node/ipam.json",
              JSON.stringify({
                version: "vpc-cni-ipam/1",
                allocations: [
                  {
                    networkName: "aws-cni",
                    containerID: id,
                    ifName: "eth0",
                    ipv4,
                    metadata: { k8sPodNamespace: "nodemend-test", k8sPodName: "p-net" }
                  }
                ]
              })
            )
          host.mkdir("var/log/pods/kube-system_aws-node-x1_0f0f/aws-vpc-cni-init")
          host.write("proc/77/comm", "aws-k8s-agent\n")
          checkpoint(leased[0]!)
          expect(await runCheck(await productionCheck("ipamd-state"))).toEqual({ findings: [], warnings: [] })
          checkpoint("10.231.0.250")
          const { findings } = await runCheck(await productionCheck("ipamd-state"))
          expect(findings.map((f) => [f.reason, f.subject])).toEqual([
            ["IPAMDInconsistentState", "nodemend-test/p-net"]
          ])
        })
      }
    )
  }
)
