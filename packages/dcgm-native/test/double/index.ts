// The C test doubles of libdcgm.so.4 / libnvidia-ml.so.1, for tests in other packages.
export { buildGpuDoubles, type GpuDoubles } from "./build.ts"
export { GpuDoubleInjector, type PolicyFire } from "./injector.ts"
export {
  encodePolicyResponse,
  POLICY_FIFO_ENV,
  POLICY_FIFO_IN_HOST,
  PolicyFifoUnavailable,
  type PolicyDelivery,
  writePolicyViolation
} from "./control.ts"
