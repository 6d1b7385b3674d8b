/** An EC2 API error as the fake answers it: its code and HTTP status. */
export class Ec2Error extends Error {
  readonly code: string
  readonly status: number
  constructor(code: string, message: string, status = 400) {
    super(message)
    this.code = code
    this.status = status
  }
}
