// Vitest globalSetup: the pinned helm binary (tools/helm/build.mjs; a no-op when it is cached).
import { build } from "../../../tools/helm/build.mjs"

export default async function setup(): Promise<void> {
  await build()
}
