// `npm run images` (tools/images/build.mjs): a second build gives the same digests as the one the real-node
// phase's globalSetup made (and runs), and each image, unpacked and run (chroot into its root filesystem, as the
// user its config names), starts node on the base's glibc and loads every package its bundle requires at run time
// from the image alone. In the real-node phase, not the unit phase: it needs what that phase needs (root, buildah)
// and reuses its build, one build fewer per `npm test`.
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buildImages, IMAGES_DIR, type ImagesSummary, imageRef } from "../../../../tools/images/build.mjs"
import { loadManifests } from "../../src/index.ts"

const work = mkdtempSync(join(tmpdir(), "nodemend-images-"))
let first: ImagesSummary
let second: ImagesSummary

interface OciConfig {
  config: { User?: string; Entrypoint?: string[]; Env?: string[] }
}

const blob = (archive: string, digest: string, encoding: "utf8" | "buffer") =>
  execFileSync("tar", ["-xOf", archive, `blobs/${digest.replace(":", "/")}`], {
    encoding: encoding === "utf8" ? "utf8" : "buffer",
    maxBuffer: 512 << 20
  })

/** Unpacks an OCI archive's layers in order into a fresh directory; returns it and the image config. */
const unpack = (archive: string, into: string) => {
  const index = JSON.parse(execFileSync("tar", ["-xOf", archive, "index.json"], { encoding: "utf8" }))
  const manifest = JSON.parse(blob(archive, index.manifests[0].digest, "utf8") as string)
  const rootfs = join(into, "rootfs")
  mkdirSync(rootfs, { recursive: true })
  for (const layer of manifest.layers as Array<{ digest: string }>)
    execFileSync("tar", ["-xzf", "-", "-C", rootfs], { input: blob(archive, layer.digest, "buffer") })
  const config = JSON.parse(blob(archive, manifest.config.digest, "utf8") as string) as OciConfig
  return { rootfs, config }
}

/** Runs node inside the image's root filesystem as `user` ("uid:gid"). */
const nodeIn = (rootfs: string, user: string, args: string[]) =>
  execFileSync("/usr/sbin/chroot", [`--userspec=${user}`, rootfs, "/usr/local/bin/node", ...args], {
    encoding: "utf8",
    env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: "/tmp" }
  })

beforeAll(async () => {
  // The build the phase runs (realNodeSetup.ts, into IMAGES_DIR), then a second one of the same tree.
  first = JSON.parse(readFileSync(join(IMAGES_DIR, "images.json"), "utf8")) as ImagesSummary
  second = await buildImages({ outDir: join(work, "b") })
}, 600_000)
afterAll(() => rmSync(work, { recursive: true, force: true }))

describe("npm run images", () => {
  it("builds the agent, controller and fake cloud under the names the chart and deploy/ use", () => {
    expect(first.images.map((i) => i.name)).toEqual(["agent", "controller", "fake-cloud"])
    const manifests = [...loadManifests("agent"), ...loadManifests("controller")]
    const images = manifests.flatMap(
      (o) =>
        (o as { spec?: { template?: { spec?: { containers?: Array<{ image: string }> } } } }).spec?.template
          ?.spec?.containers ?? []
    )
    expect(images.map((c) => c.image).sort()).toEqual([imageRef("agent"), imageRef("controller")])
  })

  it("gives the same digest on a second build of the same tree", () => {
    // Same sources (a shared working tree can change between the two builds: say so rather than blame the build).
    expect(
      second.images.map((i) => i.bundleSha256),
      "the bundles changed between the two builds"
    ).toEqual(first.images.map((i) => i.bundleSha256))
    expect(second.images.map((i) => [i.name, i.digest])).toEqual(first.images.map((i) => [i.name, i.digest]))
    for (const i of first.images) expect(i.digest).toMatch(/^sha256:[0-9a-f]{64}$/)
  })

  it("the controller image runs as non-root and loads the AWS SDK it requires from the image alone", () => {
    const controller = first.images.find((i) => i.name === "controller")!
    expect(controller.runtimePackages).toEqual(
      expect.arrayContaining(["@aws-sdk/client-ec2", "@aws-sdk/client-auto-scaling", "@smithy/signature-v4"])
    )
    const { rootfs, config } = unpack(controller.archive, join(work, "controller"))
    expect(config.config.User).toBe("65532:65532")
    expect(config.config.Entrypoint).toEqual(["node", "/opt/nodemend/dist/nodemend-controller.mjs"])
    const out = nodeIn(rootfs, "65532:65532", [
      "-e",
      "const r=require('node:module').createRequire('/opt/nodemend/dist/x.mjs');for(const p of process.argv.slice(1))r(p);console.log(process.version, process.getuid())",
      ...controller.runtimePackages
    ])
    expect(out.trim()).toBe(`v${first.node} 65532`)
  })

  it("the agent image holds koffi's native part and the chroot its host commands run through, on its own glibc", () => {
    const agent = first.images.find((i) => i.name === "agent")!
    expect(agent.runtimePackages).toEqual(["koffi"])
    const { rootfs, config } = unpack(agent.archive, join(work, "agent"))
    expect(config.config.User).toBe("0:0")
    const out = nodeIn(rootfs, "0:0", [
      "-e",
      "const k=require('node:module').createRequire('/opt/nodemend/dist/x.mjs')('koffi');console.log(typeof k.load, k.sizeof('int'))"
    ])
    expect(out.trim()).toBe("function 4")
    // Host commands run as `chroot <host root> <command>` (spawned by name: the image's PATH must find it).
    const path = config.config.Env?.find((e) => e.startsWith("PATH="))?.slice("PATH=".length) ?? ""
    const chroot = execFileSync(
      "/usr/sbin/chroot",
      [
        rootfs,
        "/usr/local/bin/node",
        "-e",
        "process.stdout.write(require('node:child_process').execFileSync('chroot', ['/', 'chroot', '--version']))"
      ],
      { encoding: "utf8", env: { PATH: path } }
    )
    expect(chroot).toContain("chroot (GNU coreutils)")
  })

  it("the fake cloud image starts its bundle", () => {
    const fake = first.images.find((i) => i.name === "fake-cloud")!
    const { rootfs } = unpack(fake.archive, join(work, "fake-cloud"))
    const out = nodeIn(rootfs, "65532:65532", ["/opt/nodemend/dist/nodemend-fake-cloud.mjs", "--help"])
    expect(out).toContain("usage: nodemend-fake-cloud")
  })

  it("records what it built in images.json", () => {
    const summary = JSON.parse(readFileSync(join(work, "b", "images.json"), "utf8")) as ImagesSummary
    expect(summary.images.map((i) => i.ref)).toEqual(second.images.map((i) => i.ref))
    expect(Object.keys(summary.base.debs)).toEqual(["libc6", "libgcc-s1", "libstdc++6"])
  })
})
