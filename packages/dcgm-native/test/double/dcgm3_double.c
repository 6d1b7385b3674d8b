/* A DCGM 3.x-shaped library: the legacy dcgmPolicyRegister without _v2, to prove the client refuses it. */
typedef int dcgmReturn_t;
dcgmReturn_t dcgmInit(void) { return 0; }
dcgmReturn_t dcgmPolicyRegister(unsigned long h, unsigned long g, unsigned int c, void *begin, void *finish) {
  (void)h; (void)g; (void)c; (void)begin; (void)finish;
  return 0;
}
