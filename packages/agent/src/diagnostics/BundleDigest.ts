/**
 * The SHA-256 and size of a bundle, taken while the bundle is written (no second read of the file). The agent
 * reports them in its own NodeDiagnostic's status, which only it may write; whoever downloads the bundle checks
 * it against them, since any agent token can read the destination URL and upload something else there.
 */
import type { Hash } from "node:crypto"
import { Transform, type TransformCallback } from "node:stream"
import type { BundleDigest } from "@nodemend/kube-access/NodeDiagnostic"

/** A pass-through stream that hashes and counts what flows through it. */
export class DigestTap extends Transform {
  private readonly hash: Hash
  private bytes = 0

  constructor() {
    super()
    // node:crypto is loaded by the first bundle, not by every agent at start (as node:zlib in TarGzWriter).
    this.hash = process.getBuiltinModule("node:crypto").createHash("sha256")
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.hash.update(chunk)
    this.bytes += chunk.length
    callback(null, chunk)
  }

  /** The digest of everything that went through; call once, after the stream ended. */
  digest(): BundleDigest {
    return { sha256: this.hash.digest("hex"), size: this.bytes }
  }
}
