// A temporary host root as the NVIDIA monitor sees a GPU node's: /dev/nvidia0..n-1 and /dev/nvidiactl (whose
// presence says the /dev is the host's, so the device-file count is compared with the libraries' count).
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export const hostWithGpus = (n: number): string => {
  const root = mkdtempSync(join(tmpdir(), "nodemend-nvidia-host-"))
  mkdirSync(join(root, "dev"))
  for (let i = 0; i < n; i++) writeFileSync(join(root, "dev", `nvidia${i}`), "")
  writeFileSync(join(root, "dev", "nvidiactl"), "")
  return root
}
