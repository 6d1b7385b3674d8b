/**
 * Reads the host's view of NVIDIA devices: `/dev/nvidia[0-9]*` and the PCI functions of vendor 0x10de with
 * a display-controller class (VGA 0x0300 or 3D 0x0302; NVSwitches are bridges, 0x0680, and are not counted).
 * The host root is configurable (the agent runs in a container with the host mounted).
 */
import { readdir, readFile } from "node:fs/promises"
import { join } from "node:path"
import { Effect } from "effect"

const DEVICE_FILE = /^nvidia[0-9]+$/

/**
 * undefined when the host's /dev is not visible: unreadable, or without `nvidiactl` (which the driver always
 * creates), i.e. the container sees its own /dev. Comparing against that would flag healthy nodes.
 */
export const countDeviceFiles = (hostRoot: string): Effect.Effect<number | undefined> =>
  Effect.promise(() =>
    readdir(join(hostRoot, "dev")).then(
      (names) => (names.includes("nvidiactl") ? names.filter((n) => DEVICE_FILE.test(n)).length : undefined),
      () => undefined
    )
  )

/** undefined when /sys/bus/pci/devices cannot be read (no sysfs: the PCI view is skipped). */
export const countNvidiaPciGpus = (hostRoot: string): Effect.Effect<number | undefined> =>
  Effect.promise(async () => {
    const dir = join(hostRoot, "sys", "bus", "pci", "devices")
    let names: string[]
    try {
      names = await readdir(dir)
    } catch {
      return undefined
    }
    let n = 0
    for (const name of names) {
      try {
        const [vendor, klass] = await Promise.all([
          readFile(join(dir, name, "vendor"), "utf8"),
          readFile(join(dir, name, "class"), "utf8")
        ])
        if (vendor.trim().toLowerCase() === "0x10de" && klass.trim().toLowerCase().startsWith("0x03")) n++
      } catch {
        // a function that vanished or has no class file is not a GPU we can count
      }
    }
    return n
  })
