// A temporary host root with the files the default collectors read, and secrets planted where real nodes
// keep them (CNI config, containerd config, env dumps), for the "no secret leaves the node" tests.
import { mkdir, mkdtemp, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"

export const PLANTED = {
  awsKeyId: "AKIAPLANTED0EXAMPLE1",
  awsSecret: "planted/Secret+Key0123456789abcdefABCDEFG",
  password: "planted-password-9f8e7d",
  bearer: "planted-bearer-token-1a2b3c",
  jwt: "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.cGxhbnRlZC1zaWduYXR1cmU",
  /** base64("robot:planted-registry-pw"): containerd's registry `auth`, which the first redaction let through. */
  registryAuth: Buffer.from("robot:planted-registry-pw").toString("base64"),
  /** A CNI plugin's Go-printed headers, which the first redaction let through. */
  basicAuth: Buffer.from("cni:planted-basic-pw").toString("base64")
} as const

export const plantedValues = (): string[] => Object.values(PLANTED)

export const makeHostRoot = async (): Promise<string> => {
  const root = await mkdtemp(join(tmpdir(), "nodemend-hostroot-"))
  const files: Record<string, string> = {
    "proc/meminfo": "MemTotal:       16384000 kB\nMemFree:         8000000 kB\n",
    "proc/loadavg": "0.52 0.58 0.59 1/467 12345\n",
    "proc/uptime": "12345.67 23456.78\n",
    "proc/1/mounts": "/dev/nvme0n1p1 / xfs rw,noatime 0 0\n",
    "proc/sys/net/netfilter/nf_conntrack_count": "1234\n",
    "proc/sys/net/netfilter/nf_conntrack_max": "262144\n",
    "etc/os-release": 'NAME="Amazon Linux"\nVERSION="2023"\n',
    "etc/resolv.conf": "nameserver 10.0.0.2\n",
    "etc/containerd/config.toml": `version = 2\n[plugins."io.containerd.grpc.v1.cri".registry.configs."r".auth]\n  password = "${PLANTED.password}"\n  token = "${PLANTED.bearer}"\n[plugins."io.containerd.grpc.v1.cri".registry.configs."q".auth]\n  auth = "${PLANTED.registryAuth}"\n`,
    "etc/cni/net.d/10-aws.conflist": JSON.stringify(
      {
        cniVersion: "0.4.0",
        name: "aws-cni",
        plugins: [
          {
            type: "aws-cni",
            env: { AWS_SECRET_ACCESS_KEY: PLANTED.awsSecret, AWS_ACCESS_KEY_ID: PLANTED.awsKeyId }
          }
        ]
      },
      null,
      2
    ),
    "etc/cni/net.d/99-loopback.conf": `{"cniVersion":"0.4.0","type":"loopback","headers":"Authorization: Bearer ${PLANTED.bearer}"}\n`,
    "etc/cni/net.d/98-proxy.conf": `{"cniVersion":"0.4.0","type":"proxy","upstreamHeaders":{"Authorization":["Basic ${PLANTED.basicAuth}"]}}\n`
  }
  for (const [p, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, p)), { recursive: true })
    await writeFile(join(root, p), content)
  }
  return root
}

/** Agent state that (wrongly) carries secrets, as a provider might if a message quoted an env var. */
export const leakyAgentState = async () => ({
  conditions: [{ type: "AcceleratedHardwareReady", status: "False", reason: "NvidiaXID79Error" }],
  recentDetections: [
    { reason: "NvidiaXID79Error", message: `env DB_PASSWORD=${PLANTED.password} token ${PLANTED.jwt}` }
  ]
})
