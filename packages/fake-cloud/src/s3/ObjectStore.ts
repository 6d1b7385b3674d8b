/** The fake's S3 objects, in memory: what a presigned PUT stored, for a presigned GET and for tests to read. */
import { createHash } from "node:crypto"

export interface StoredObject {
  readonly body: Buffer
  /** As S3 answers it for a single-part upload: the MD5 of the body, quoted. */
  readonly etag: string
  readonly lastModified: Date
  readonly contentType: string
}

export class ObjectStore {
  private readonly objects = new Map<string, StoredObject>()

  put(bucket: string, key: string, body: Buffer, contentType = "binary/octet-stream"): StoredObject {
    const stored = {
      body,
      etag: `"${createHash("md5").update(body).digest("hex")}"`,
      lastModified: new Date(),
      contentType
    }
    this.objects.set(`${bucket}/${key}`, stored)
    return stored
  }

  get(bucket: string, key: string): StoredObject | undefined {
    return this.objects.get(`${bucket}/${key}`)
  }

  /** Every object as `s3://bucket/key`. */
  list(): ReadonlyArray<string> {
    return [...this.objects.keys()].map((k) => `s3://${k}`)
  }
}
