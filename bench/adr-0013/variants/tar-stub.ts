export class TarGzWriter {
  async addDirectory(_p: string) {}
  async addBuffer(_p: string, _d: unknown) {}
  async addStream(_p: string, _n: number, _s: unknown) {}
  async addFile(_p: string, _f: string) {}
  async finish() {}
}
