/**
 * A simulated node host: the files under a host root that the agent reads (`--host-root`), and the writers
 * that put a fault where the real source would put it: a kmsg record on dev/kmsg, a journal entry written by
 * systemd-journal-remote into var/log/journal, a line appended to a log file. The agent finds every fault
 * by reading, as on a real node; nothing here touches the Kubernetes API.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { execFileSync } from "node:child_process"
import { dirname, join } from "node:path"

const JOURNAL_REMOTE = [
  "/lib/systemd/systemd-journal-remote",
  "/usr/lib/systemd/systemd-journal-remote"
].find((p) => existsSync(p))

const UPTIME_S = 3600

/** Lays out a healthy host root: boot id and time, loopback, ip_forward, an empty kernel log, journal and ipamd dirs. */
export const makeHost = (root, bootId) => {
  const write = (rel, content) => {
    mkdirSync(dirname(join(root, rel)), { recursive: true })
    writeFileSync(join(root, rel), content)
  }
  write("proc/sys/kernel/random/boot_id", `${bootId}\n`)
  write("proc/stat", `cpu 0 0 0 0\nbtime ${Math.floor(Date.now() / 1000) - UPTIME_S}\n`)
  write("proc/uptime", `${UPTIME_S}.00 ${UPTIME_S}.00\n`)
  write("proc/1/comm", "systemd\n")
  write("proc/1/stat", `1 (systemd) S ${Array.from({ length: 50 }, () => "0").join(" ")}\n`)
  write("proc/sys/net/ipv4/ip_forward", "1\n")
  write("sys/class/net/lo/flags", "0x49\n")
  write("sys/class/net/lo/operstate", "unknown\n")
  write("sys/class/net/lo/address", "00:00:00:00:00:00\n")
  write("dev/kmsg", "")
  write("var/log/aws-routed-eni/ipamd.log", "")
  mkdirSync(join(root, "var/log/journal"), { recursive: true })
  return root
}

const btimeOf = (root) => Number(/btime (\d+)/.exec(readFileSync(join(root, "proc/stat"), "utf8"))?.[1] ?? 0)

/** One kernel log record (`prio,seq,usec,-;text`), its sequence number after the last one in the file. */
export const appendKmsg = (root, text, prio = 3) => {
  const path = join(root, "dev/kmsg")
  const seq = readFileSync(path, "utf8").split("\n").filter(Boolean).length + 1
  const usec = Math.max(0, Date.now() * 1000 - btimeOf(root) * 1_000_000)
  appendFileSync(path, `${prio},${seq},${usec},-;${text}\n`)
}

/** One journal entry, as journald would store it: a new journal file written by systemd-journal-remote. */
export const appendJournal = (root, identifier, message) => {
  if (JOURNAL_REMOTE === undefined)
    throw new Error("systemd-journal-remote is not installed (apt-get install systemd-journal-remote)")
  const us = BigInt(Date.now()) * 1000n
  const entry = [
    `__REALTIME_TIMESTAMP=${us}`,
    `__MONOTONIC_TIMESTAMP=${UPTIME_S * 1_000_000}`,
    `_BOOT_ID=${readFileSync(join(root, "proc/sys/kernel/random/boot_id"), "utf8").trim().replaceAll("-", "").padEnd(32, "0").slice(0, 32)}`,
    `SYSLOG_IDENTIFIER=${identifier}`,
    `MESSAGE=${message}`,
    ""
  ].join("\n")
  const file = join(root, "var/log/journal", `demo-${us}.journal`)
  execFileSync(JOURNAL_REMOTE, [`--output=${file}`, "-"], {
    input: `${entry}\n`,
    stdio: ["pipe", "ignore", "pipe"]
  })
}

/** Lines appended to a log file under the host root (`var/log/aws-routed-eni/ipamd.log`). */
export const appendLog = (root, rel, text) => {
  mkdirSync(dirname(join(root, rel)), { recursive: true })
  appendFileSync(join(root, rel), `${text}\n`)
}
