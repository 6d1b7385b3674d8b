// A stand-in for a GPU node's agent in inject.test.mjs: loads the DCGM test double (argv[2]) as the agent does
// (the Dcgm service of @nodemend/dcgm-native), opens a session, which registers the policy callback, and prints
// every violation it is handed, decoded, as a JSON line. "ready" once registered.
import { Effect, Stream } from "effect"
import { Dcgm } from "../../../dcgm-native/src/dcgm.ts"

const program = Effect.gen(function* () {
  const dcgm = yield* Dcgm
  const session = yield* dcgm.connect({ _tag: "Standalone", address: "127.0.0.1:5555" })
  console.log("ready")
  yield* Stream.runForEach(session.violations, (v) => Effect.sync(() => console.log(JSON.stringify(v))))
}).pipe(Effect.scoped, Effect.provide(Dcgm.layer(process.argv[2])))

await Effect.runPromise(program)
